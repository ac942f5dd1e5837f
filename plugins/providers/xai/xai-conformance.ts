import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { xai, xaiManifest } from './index.js';

/** xAI under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(xai, xaiManifest, { model: 'grok-3-mini' });
