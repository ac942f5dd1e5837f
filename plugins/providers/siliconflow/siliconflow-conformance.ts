import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { siliconflow, siliconflowManifest } from './index.js';

/** SiliconFlow under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(siliconflow, siliconflowManifest, { model: 'Qwen/Qwen2.5-7B-Instruct', embeddingModel: 'BAAI/bge-m3', rerankModel: 'BAAI/bge-reranker-v2-m3' });
