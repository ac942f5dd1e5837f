import { compatibleSubject } from '../openai-compatible/openai-compatible-fake.js';
import { ovhcloud, ovhcloudManifest } from './index.js';

/** OVHcloud AI Endpoints under the conformance kit: the plugin against a fake that behaves as its documentation says. */
export const conformance = compatibleSubject(ovhcloud, ovhcloudManifest, { model: 'Meta-Llama-3_3-70B-Instruct', embeddingModel: 'bge-m3' });
