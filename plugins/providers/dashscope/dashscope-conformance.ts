import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { dashscope, dashscopeManifest } from './index.js';

/** Alibaba Cloud DashScope under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(dashscope, dashscopeManifest, { model: 'qwen-plus', embeddingModel: 'text-embedding-v3' });
