import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { fireworks, fireworksManifest } from './index.js';

/** Fireworks AI under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(fireworks, fireworksManifest, { model: 'accounts/fireworks/models/llama-v3p1-8b-instruct', embeddingModel: 'nomic-ai/nomic-embed-text-v1.5' });
