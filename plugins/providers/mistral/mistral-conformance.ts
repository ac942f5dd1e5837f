import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { mistral, mistralManifest } from './index.js';

/** Mistral AI under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(mistral, mistralManifest, { model: 'mistral-small-latest', embeddingModel: 'mistral-embed', fake: { errorShape: 'top-level' } });
