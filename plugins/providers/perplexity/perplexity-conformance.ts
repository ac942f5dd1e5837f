import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { perplexity, perplexityManifest } from './index.js';

/** Perplexity under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(perplexity, perplexityManifest, { model: 'sonar' });
