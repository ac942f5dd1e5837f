import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { nscale, nscaleManifest } from './index.js';

/** Nscale under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(nscale, nscaleManifest, { model: 'meta-llama/Llama-3.1-8B-Instruct', embeddingModel: 'Qwen/Qwen3-Embedding-8B' });
