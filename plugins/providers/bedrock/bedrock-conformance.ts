import type { ConformanceSubject } from '../../../core/spec/index.js';
import { bedrockFake, FAKE_REGION, FAKE_SECRET_ACCESS_KEY, FAKE_SESSION_TOKEN } from './bedrock-fake.js';
import { bedrock } from './index.js';

export const bedrockConformance: ConformanceSubject = {
  registration: bedrock(),
  fake: bedrockFake,
  model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
  embeddingModel: 'amazon.titan-embed-text-v2:0',
  // Titan embeds one text per request.
  maxEmbeddingInputs: 1,
  rerankModel: 'amazon.rerank-v1:0',
  // The Rerank API reports no usage.
  rerankUsage: 'none',
  headers: {
    'x-gateway-cloud-c-secret-access-key': FAKE_SECRET_ACCESS_KEY,
    'x-gateway-cloud-c-session-token': FAKE_SESSION_TOKEN,
    'x-gateway-cloud-c-region': FAKE_REGION,
  },
  supportsN: false,
  developerRole: false,
};

export default bedrockConformance;
