import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { cerebras, cerebrasManifest } from './index.js';

/** Cerebras under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(cerebras, cerebrasManifest, { model: 'llama3.1-8b' });
