import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { lambda, lambdaManifest } from './index.js';

/** Lambda under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(lambda, lambdaManifest, { model: 'llama3.1-8b-instruct' });
