import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { deepinfra, deepinfraManifest } from './index.js';

/** DeepInfra under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(deepinfra, deepinfraManifest, { model: 'meta-llama/Meta-Llama-3.1-8B-Instruct', embeddingModel: 'BAAI/bge-large-en-v1.5' });
