import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderFakeRenderer, ReceivedRequest, RenderedAnswer } from '../../../core/spec/index.js';
import { type CompatibleProviderManifest } from '../openai-compatible/index.js';
import { compatibleFake } from '../openai-compatible/openai-compatible-fake.js';
import { CLOUDFLARE_CHAT_QUIRKS } from './cloudflare-operations.js';

const fixtures = join(process.cwd(), 'plugins/providers/cloudflare-workers-ai/__fixtures__');

export const cloudflareFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** The account the conformance subject names in `x-gateway-cloudflare-account-id`. */
export const FAKE_ACCOUNT = '0123456789abcdef0123456789abcdef';

/** How the fake's OpenAI-compatible half behaves: the plugin's own quirks. */
const manifest: CompatibleProviderManifest = {
  id: 'cloudflare-workers-ai',
  name: 'Cloudflare Workers AI',
  description: 'fake',
  baseUrl: 'http://unused',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
  chat: CLOUDFLARE_CHAT_QUIRKS,
};

const JSON_TYPE = { 'content-type': 'application/json' };

/** Cloudflare's failure envelope. */
const envelope = (code: number, message: string) => JSON.stringify({ result: null, success: false, errors: [{ code, message }], messages: [] });

/** Internal codes from Workers AI's error table, by HTTP status (7003 is the API's "no route"). */
const CODE_BY_STATUS: Record<number, number> = { 400: 5007, 401: 10000, 404: 7003, 408: 3007, 413: 3006, 429: 3036 };

/** The path a request for `operation` must take on the fake's account. */
const pathFor = (operation: string) => `/accounts/${FAKE_ACCOUNT}/ai/v1/${operation === 'embed' ? 'embeddings' : 'chat/completions'}`;

/**
 * Workers AI, faked: the account's OpenAI-compatible endpoints answered in OpenAI's shapes (the
 * shared compatible fake, with this plugin's quirks), but only on the account's own paths, and every
 * error in Cloudflare's `{success: false, errors: [{code, message}]}` envelope.
 */
export function cloudflareWorkersAIFake(): ProviderFakeRenderer {
  const inner = compatibleFake(manifest);
  return {
    ...inner,
    render(scenario, request: ReceivedRequest, stream): RenderedAnswer {
      const { operation } = inner.classify(request);
      const path = request.url.split('?')[0];
      // The fake's own origin may sit under a prefix (the kit's custom host ends in /v1): what follows must be the account's path.
      if (!path.endsWith(pathFor(operation))) return { status: 404, headers: JSON_TYPE, chunks: [envelope(7003, 'No route for the URI')] };
      if (scenario.kind === 'error') {
        const headers: Record<string, string> = { ...JSON_TYPE };
        if (scenario.retryAfter !== undefined) headers['retry-after'] = scenario.retryAfter;
        return { status: scenario.status, headers, chunks: [envelope(CODE_BY_STATUS[scenario.status] ?? 5000, scenario.message)] };
      }
      const answer = inner.render(scenario, request, stream);
      if (answer.status < 400) return answer;
      // The compatible fake's refusals, re-written in Cloudflare's envelope.
      const text = answer.chunks.map((chunk) => (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))).join('');
      const message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? 'Bad input';
      return { status: answer.status, headers: JSON_TYPE, chunks: [envelope(5006, message)] };
    },
  };
}
