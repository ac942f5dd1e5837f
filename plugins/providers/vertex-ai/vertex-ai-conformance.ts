import type { ConformanceSubject } from '../../../core/spec/index.js';
import { vertexAI } from './index.js';
import { vertexFakeRenderer } from './vertex-ai-fake.js';

export const subject: ConformanceSubject = {
  registration: vertexAI(),
  fake: vertexFakeRenderer,
  model: 'gemini-2.5-flash',
  embeddingModel: 'text-embedding-005',
  credential: 'ya29.conformance-access-token',
  headers: { 'x-gateway-cloud-b-project-id': 'conformance-project', 'x-gateway-cloud-b-region': 'us-central1' },
  supportsN: true,
  developerRole: false,
};
