import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { zhipu, zhipuManifest } from './index.js';

/** Zhipu AI (BigModel) under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(zhipu, zhipuManifest, { model: 'glm-4-plus', embeddingModel: 'embedding-3' });
