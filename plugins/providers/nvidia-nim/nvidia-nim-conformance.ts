import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { nvidiaNim, nvidiaNimManifest } from './index.js';

/** NVIDIA NIM under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(nvidiaNim, nvidiaNimManifest, { model: 'meta/llama-3.1-8b-instruct', embeddingModel: 'nvidia/nv-embedqa-e5-v5' });
