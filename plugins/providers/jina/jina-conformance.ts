import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { jina, jinaManifest } from './index.js';

/** Jina AI under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(jina, jinaManifest, { model: 'jina-embeddings-v3', embeddingModel: 'jina-embeddings-v3', rerankModel: 'jina-reranker-v2-base-multilingual', fake: { errorShape: 'detail' } });
