import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { openrouter, openrouterManifest } from './index.js';

/** OpenRouter under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(openrouter, openrouterManifest, { model: 'openai/gpt-4o-mini' });
