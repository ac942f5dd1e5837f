import { defineConfig } from '../../config/index.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';

/**
 * The configuration of the instances test/scale/three-instances.e2e.test.ts starts: the two
 * providers its fakes stand for, and the response cache on for every request (shared through
 * Redis). Everything else comes from the environment (REDIS_URL, DATABASE_URL, GATEWAY_LOG_PG_SCHEMA).
 */
export default defineConfig({
  providers: [openai(), anthropic()],
  cache: { default: { mode: 'simple', max_age: 600 } },
});
