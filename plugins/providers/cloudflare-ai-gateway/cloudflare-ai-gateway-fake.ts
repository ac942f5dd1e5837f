import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderFakeRenderer, RenderedAnswer } from '../../../core/spec/index.js';
import type { CompatibleProviderManifest } from '../openai-compatible/index.js';
import { compatibleFake } from '../openai-compatible/openai-compatible-fake.js';

const fixtures = join(process.cwd(), 'plugins/providers/cloudflare-ai-gateway/__fixtures__');

export const aiGatewayFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** The account and gateway the conformance subject names in its headers. */
export const FAKE_ACCOUNT = '0123456789abcdef0123456789abcdef';
export const FAKE_GATEWAY = 'conformance-gateway';

const wire: CompatibleProviderManifest = { id: 'cloudflare-ai-gateway', name: 'Cloudflare AI Gateway', description: 'fake', baseUrl: 'http://unused', operations: ['chat'], auth: { kind: 'bearer' } };

const JSON_TYPE = { 'content-type': 'application/json' };
const envelope = (status: number, code: number, message: string, retryAfter?: string): RenderedAnswer => ({
  status,
  headers: retryAfter === undefined ? JSON_TYPE : { ...JSON_TYPE, 'retry-after': retryAfter },
  chunks: [JSON.stringify({ success: false, result: [], messages: [], error: [{ code, message }] })],
});

/**
 * AI Gateway's compat endpoint, faked: OpenAI's chat only under `/<account>/<gateway>/compat/`, a
 * model named `<provider>/<model>`, and the gateway's own failures in Cloudflare's envelope.
 */
export function aiGatewayFake(): ProviderFakeRenderer {
  const inner = compatibleFake(wire);
  return {
    ...inner,
    render(scenario, request, stream) {
      const path = request.url.split('?')[0];
      if (!path.endsWith(`/${FAKE_ACCOUNT}/${FAKE_GATEWAY}/compat/chat/completions`)) return envelope(404, 2005, `no route for ${path}`);
      if (scenario.kind === 'error') return envelope(scenario.status, 2000 + scenario.status, scenario.message, scenario.retryAfter);
      const model = (JSON.parse(request.body.toString('utf8')) as { model?: unknown }).model;
      if (typeof model !== 'string' || !/^[a-z0-9-]+\/.+/.test(model)) return envelope(400, 2008, 'model must be <provider>/<model>');
      return inner.render(scenario, request, stream);
    },
  };
}
