import type { ConformanceSubject } from '../../../core/spec/index.js';
import { geminiFakeRenderer } from './gemini-fake.js';
import { gemini } from './index.js';

export const subject: ConformanceSubject = {
  registration: gemini(),
  fake: geminiFakeRenderer,
  model: 'gemini-2.5-flash',
  embeddingModel: 'gemini-embedding-001',
  // batchEmbedContents answers carry no token counts: usage is reported as zeros.
  reportsEmbeddingUsage: false,
  credential: 'AIza-conformance-key',
  supportsN: true,
  developerRole: false,
};
