import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { baseten, basetenManifest } from './index.js';

/** Baseten Model APIs under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(baseten, basetenManifest, { model: 'openai/gpt-oss-120b' });
