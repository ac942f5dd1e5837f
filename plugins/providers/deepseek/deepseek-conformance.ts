import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { deepseek, deepseekManifest } from './index.js';

/** DeepSeek under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(deepseek, deepseekManifest, { model: 'deepseek-chat' });
