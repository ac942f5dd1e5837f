import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { upstage, upstageManifest } from './index.js';

/** Upstage under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(upstage, upstageManifest, { model: 'solar-pro2', embeddingModel: 'embedding-query' });
