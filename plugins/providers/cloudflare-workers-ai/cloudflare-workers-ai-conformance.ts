import type { ConformanceSubject } from '../../../core/spec/index.js';
import { cloudflareWorkersAIFake, FAKE_ACCOUNT } from './cloudflare-workers-ai-fake.js';
import { cloudflareWorkersAI } from './index.js';

/** Cloudflare Workers AI under the conformance kit: the plugin against a fake that checks the account path and answers errors in Cloudflare's envelope. */
export const cloudflareWorkersAIConformance: ConformanceSubject = {
  registration: cloudflareWorkersAI(),
  fake: cloudflareWorkersAIFake(),
  model: '@cf/meta/llama-3.1-8b-instruct',
  embeddingModel: '@cf/baai/bge-large-en-v1.5',
  headers: { 'x-gateway-cloudflare-account-id': FAKE_ACCOUNT },
  supportsN: false,
  developerRole: false,
};

export default cloudflareWorkersAIConformance;
