import type { ConformanceSubject } from '../../../core/spec/index.js';
import { openai } from './index.js';
import { openaiFake } from './openai-fake.js';

export const conformance: ConformanceSubject = {
  registration: openai(),
  fake: openaiFake,
  model: 'gpt-4.1-mini',
  embeddingModel: 'text-embedding-3-small',
  supportsN: true,
  developerRole: true,
};
