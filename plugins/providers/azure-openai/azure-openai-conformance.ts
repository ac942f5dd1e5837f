import type { ConformanceSubject } from '../../../core/spec/index.js';
import { azureOpenAIFake } from './azure-openai-fake.js';
import { azureOpenAI } from './index.js';

export const azureOpenAIConformance: ConformanceSubject = {
  registration: azureOpenAI(),
  fake: azureOpenAIFake,
  model: 'gpt-4o',
  embeddingModel: 'text-embedding-3-small',
  headers: {
    'x-gateway-cloud-a-resource-name': 'conformance',
    'x-gateway-cloud-a-deployment-id': 'conformance-deployment',
    'x-gateway-cloud-a-api-version': '2024-10-21',
  },
  supportsN: true,
  developerRole: true,
};

export default azureOpenAIConformance;
