import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { groq, groqManifest } from './index.js';

/** Groq under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(groq, groqManifest, { model: 'llama-3.3-70b-versatile' });
