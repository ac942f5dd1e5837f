import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { featherless, featherlessManifest } from './index.js';

/** Featherless AI under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(featherless, featherlessManifest, { model: 'Qwen/Qwen2.5-7B-Instruct' });
