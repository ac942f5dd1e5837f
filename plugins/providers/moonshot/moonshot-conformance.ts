import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { moonshot, moonshotManifest } from './index.js';

/** Moonshot AI under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(moonshot, moonshotManifest, { model: 'kimi-k2-0711-preview' });
