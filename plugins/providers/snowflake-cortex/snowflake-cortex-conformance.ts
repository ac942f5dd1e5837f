import type { ConformanceSubject } from '../../../core/spec/index.js';
import { FAKE_ACCOUNT, snowflakeCortexFake } from './snowflake-cortex-fake.js';
import { snowflakeCortex } from './index.js';

/** Snowflake Cortex under the conformance kit: the plugin against a fake that serves only the Cortex Chat Completions path. */
export const snowflakeCortexConformance: ConformanceSubject = {
  registration: snowflakeCortex(),
  fake: snowflakeCortexFake(),
  model: 'claude-sonnet-4-5',
  headers: { 'x-gateway-snowflake-account': FAKE_ACCOUNT },
  supportsN: false,
  developerRole: false,
};

export default snowflakeCortexConformance;
