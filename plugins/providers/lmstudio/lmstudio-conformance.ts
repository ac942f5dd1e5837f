import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { lmstudio, lmstudioManifest } from './index.js';

/** LM Studio under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(lmstudio, lmstudioManifest, { model: 'qwen2.5-7b-instruct', embeddingModel: 'text-embedding-nomic-embed-text-v1.5' });
