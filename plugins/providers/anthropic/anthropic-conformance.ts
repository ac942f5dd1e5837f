import type { ConformanceSubject } from '../../../core/spec/index.js';
import { anthropicFakeRenderer } from './anthropic-fake.js';
import { anthropic } from './index.js';

export const subject: ConformanceSubject = {
  registration: anthropic(),
  fake: anthropicFakeRenderer,
  model: 'claude-sonnet-4-5',
  credential: 'sk-ant-conformance-key',
  supportsN: false,
  developerRole: false,
};
