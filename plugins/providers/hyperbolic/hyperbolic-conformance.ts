import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { hyperbolic, hyperbolicManifest } from './index.js';

/** Hyperbolic under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(hyperbolic, hyperbolicManifest, { model: 'meta-llama/Meta-Llama-3.1-8B-Instruct' });
