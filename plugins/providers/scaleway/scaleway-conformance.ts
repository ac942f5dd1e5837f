import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { scaleway, scalewayManifest } from './index.js';

/** Scaleway Generative APIs under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(scaleway, scalewayManifest, { model: 'llama-3.1-8b-instruct', embeddingModel: 'bge-multilingual-gemma2' });
