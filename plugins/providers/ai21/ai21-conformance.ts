import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { ai21, ai21Manifest } from './index.js';

/** AI21 Labs under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(ai21, ai21Manifest, { model: 'jamba-mini' });
