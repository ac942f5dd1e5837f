import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { writer, writerManifest } from './index.js';

/** Writer under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(writer, writerManifest, { model: 'palmyra-x5' });
