import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { novita, novitaManifest } from './index.js';

/** Novita AI under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(novita, novitaManifest, { model: 'meta-llama/llama-3.1-8b-instruct', embeddingModel: 'baai/bge-m3' });
