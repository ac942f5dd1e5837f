import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { voyage, voyageManifest } from './index.js';

/** Voyage AI under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(voyage, voyageManifest, { model: 'voyage-3.5', embeddingModel: 'voyage-3.5', rerankModel: 'rerank-2.5', fake: { errorShape: 'detail', embedUsageTotalOnly: true } });
