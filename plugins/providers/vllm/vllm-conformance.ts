import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { vllm, vllmManifest } from './index.js';

/** vLLM under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(vllm, vllmManifest, { model: 'meta-llama/Llama-3.1-8B-Instruct', embeddingModel: 'intfloat/e5-mistral-7b-instruct', rerankModel: 'BAAI/bge-reranker-base', fake: { errorShape: 'top-level' } });
