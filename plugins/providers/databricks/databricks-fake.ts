import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderFakeRenderer, ReceivedRequest, RenderedAnswer } from '../../../core/spec/index.js';
import type { CompatibleProviderManifest } from '../openai-compatible/index.js';
import { compatibleFake } from '../openai-compatible/openai-compatible-fake.js';
import { DATABRICKS_CHAT_QUIRKS } from './index.js';

const fixtures = join(process.cwd(), 'plugins/providers/databricks/__fixtures__');

export const databricksFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** The workspace the conformance subject names in `x-gateway-databricks-host`. */
export const FAKE_WORKSPACE = 'dbc-1234abcd-5678.cloud.databricks.com';

const manifest: CompatibleProviderManifest = {
  id: 'databricks',
  name: 'Databricks',
  description: 'fake',
  baseUrl: 'http://unused',
  operations: ['chat', 'embed'],
  auth: { kind: 'bearer' },
  paths: { chat: '/serving-endpoints/chat/completions', embed: '/serving-endpoints/embeddings' },
  chat: DATABRICKS_CHAT_QUIRKS,
};

const JSON_TYPE = { 'content-type': 'application/json' };
const CODE_BY_STATUS: Record<number, string> = { 400: 'BAD_REQUEST', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'RESOURCE_DOES_NOT_EXIST', 429: 'REQUEST_LIMIT_EXCEEDED', 500: 'INTERNAL_ERROR', 503: 'TEMPORARILY_UNAVAILABLE' };
const failure = (status: number, message: string, retryAfter?: string): RenderedAnswer => ({
  status,
  headers: retryAfter === undefined ? JSON_TYPE : { ...JSON_TYPE, 'retry-after': retryAfter },
  chunks: [JSON.stringify({ error_code: CODE_BY_STATUS[status] ?? 'INTERNAL_ERROR', message })],
});

/**
 * Databricks Model Serving, faked: OpenAI's shapes under `/serving-endpoints/…` (the shared compatible
 * fake, with this plugin's quirks), only there, and errors as `{"error_code", "message"}`.
 */
export function databricksFake(): ProviderFakeRenderer {
  const inner = compatibleFake(manifest);
  return {
    ...inner,
    render(scenario, request: ReceivedRequest, stream) {
      const path = request.url.split('?')[0];
      if (!path.endsWith('/serving-endpoints/chat/completions') && !path.endsWith('/serving-endpoints/embeddings')) return failure(404, `No API found for 'POST ${path}'`);
      if (scenario.kind === 'error') return failure(scenario.status, scenario.message, scenario.retryAfter);
      const answer = inner.render(scenario, request, stream);
      if (answer.status < 400) return answer;
      const text = answer.chunks.map((chunk) => (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))).join('');
      return failure(answer.status, (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? 'Bad request');
    },
  };
}
