import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { nebius, nebiusManifest } from './index.js';

/** Nebius AI Studio under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(nebius, nebiusManifest, { model: 'meta-llama/Meta-Llama-3.1-8B-Instruct', embeddingModel: 'BAAI/bge-en-icl' });
