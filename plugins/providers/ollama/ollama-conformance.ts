import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { ollama, ollamaManifest } from './index.js';

/** Ollama under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(ollama, ollamaManifest, { model: 'llama3.2', embeddingModel: 'nomic-embed-text' });
