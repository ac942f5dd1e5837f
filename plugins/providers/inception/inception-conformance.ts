import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { inception, inceptionManifest } from './index.js';

/** Inception under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(inception, inceptionManifest, { model: 'mercury-2' });
