import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { llamacpp, llamacppManifest } from './index.js';

/** llama.cpp server under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(llamacpp, llamacppManifest, { model: 'default', embeddingModel: 'default' });
