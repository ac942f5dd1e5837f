import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { sambanova, sambanovaManifest } from './index.js';

/** SambaNova under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(sambanova, sambanovaManifest, { model: 'Meta-Llama-3.1-8B-Instruct' });
