import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { litellm, litellmManifest } from './index.js';

/** LiteLLM proxy under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(litellm, litellmManifest, { model: 'gpt-4o-mini', embeddingModel: 'text-embedding-3-small', rerankModel: 'rerank-v3.5' });
