import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { together, togetherManifest } from './index.js';

/** Together AI under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(together, togetherManifest, { model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo', rerankModel: 'Salesforce/Llama-Rank-V1', embeddingModel: 'BAAI/bge-base-en-v1.5' });
