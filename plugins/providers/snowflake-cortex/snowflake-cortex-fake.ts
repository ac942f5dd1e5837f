import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderFakeRenderer, ReceivedRequest, RenderedAnswer } from '../../../core/spec/index.js';
import type { CompatibleProviderManifest } from '../openai-compatible/index.js';
import { compatibleFake } from '../openai-compatible/openai-compatible-fake.js';
import { SNOWFLAKE_CHAT_QUIRKS } from './index.js';

const fixtures = join(process.cwd(), 'plugins/providers/snowflake-cortex/__fixtures__');

export const snowflakeFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** The account the conformance subject names in `x-gateway-snowflake-account`. */
export const FAKE_ACCOUNT = 'myorg-myaccount';

const manifest: CompatibleProviderManifest = {
  id: 'snowflake-cortex',
  name: 'Snowflake Cortex',
  description: 'fake',
  baseUrl: 'http://unused',
  operations: ['chat'],
  auth: { kind: 'bearer' },
  paths: { chat: '/api/v2/cortex/v1/chat/completions' },
  chat: SNOWFLAKE_CHAT_QUIRKS,
};

/** Snowflake Cortex's Chat Completions API, faked: OpenAI's shapes only under `/api/v2/cortex/v1/chat/completions`. */
export function snowflakeCortexFake(): ProviderFakeRenderer {
  const inner = compatibleFake(manifest);
  return {
    ...inner,
    render(scenario, request: ReceivedRequest, stream): RenderedAnswer {
      const path = request.url.split('?')[0];
      if (!path.endsWith('/api/v2/cortex/v1/chat/completions')) {
        return { status: 404, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ code: '390404', message: `no route for ${path}` })] };
      }
      return inner.render(scenario, request, stream);
    },
  };
}
