import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { mixedbread, mixedbreadManifest } from './index.js';

/** Mixedbread under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(mixedbread, mixedbreadManifest, { model: 'mxbai-embed-large-v1', embeddingModel: 'mxbai-embed-large-v1', rerankModel: 'mxbai-rerank-large-v2' });
