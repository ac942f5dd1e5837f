import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { parasail, parasailManifest } from './index.js';

/** Parasail under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(parasail, parasailManifest, { model: 'parasail-llama-33-70b-fp8' });
