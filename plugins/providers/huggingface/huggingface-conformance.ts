import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { huggingface, huggingfaceManifest } from './index.js';

/** Hugging Face Inference Providers under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(huggingface, huggingfaceManifest, { model: 'meta-llama/Llama-3.1-8B-Instruct:cerebras' });
