import { createClient } from '@keyv/redis';
import type { ServerResponse } from 'node:http';
import type { ExecutionContext } from 'ava';
import type { RecordedRequest } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, type TestGateway } from '../harness.js';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** True when Redis answers; otherwise prints why the suite is skipped (and fails under CI=true). */
export async function redisAvailable(): Promise<boolean> {
  const client = createClient({ url: REDIS_URL, socket: { connectTimeout: 1000, reconnectStrategy: false } });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    await client.close();
    return true;
  } catch (error) {
    if (process.env.CI === 'true') throw new Error(`Redis at ${REDIS_URL} is unreachable under CI=true: ${(error as Error).message}`);
    process.stdout.write(`skipping Redis tests: ${REDIS_URL} is unreachable (${(error as Error).message})\n`);
    return false;
  }
}

/** Deletes every Redis key under `prefix` (test clean-up). */
export async function clearRedisPrefix(prefix: string): Promise<void> {
  const client = createClient({ url: REDIS_URL });
  client.on('error', () => {});
  await client.connect();
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) {
    if (keys.length) await client.del(keys);
  }
  await client.close();
}

/** Calls the admin API with the account key (or `key`). */
export async function admin(gateway: TestGateway, method: string, path: string, body?: unknown, key = ACCOUNT_KEY) {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, json: text ? (JSON.parse(text) as any) : undefined };
}

/** Creates a virtual key through the admin API; fails the test unless it is 201. */
export async function createKey(t: ExecutionContext, gateway: TestGateway, body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const created = await admin(gateway, 'POST', '/admin/virtual-keys', body);
  if (created.status !== 201) t.fail(`creating a key gave ${created.status}: ${created.text}`);
  return { id: created.json.id, key: created.json.key };
}

/**
 * Usage the fake reports for every chat completion (gpt-4o-mini: $0.15 in, $0.60 out per million):
 * the prompt tokens are FIXED_MESSAGES' reservation bound, so a request is charged exactly what it reserved.
 */
export const FIXED_USAGE = { prompt_tokens: 60, completion_tokens: 10, total_tokens: 70 };
/** Hand-computed: 60 × 0.15 / 1e6 + 10 × 0.60 / 1e6 = 0.000015 USD. */
export const FIXED_COST_USD = 0.000015;

/**
 * 20 characters of content: bounded at exactly 60 prompt tokens, equal to the fake's fixed usage
 * (50 bytes of JSON, `[{"role":"user","content":"xxxxxxxxxxxxxxxxxxxx"}]`, plus the 10 tokens of
 * request overhead; core/vault/estimate.ts).
 */
export const FIXED_MESSAGES = [{ role: 'user' as const, content: 'x'.repeat(20) }];

/**
 * A fake OpenAI that answers every chat with FIXED_USAGE after `delayMs` (so concurrent requests
 * really are in flight together), pass-through `POST /v1/batches` with the same usage, and
 * `GET /v1/files` with an empty list.
 */
export function fixedUsageHandler(delayMs = 50) {
  return (request: RecordedRequest, response: ServerResponse) => {
    const body = request.body.length ? request.json() : {};
    const answer = {
      id: 'chatcmpl-fixed',
      object: request.url.startsWith('/v1/batches') ? 'batch' : 'chat.completion',
      created: 1741569952,
      model: body.model ?? 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, logprobs: null, finish_reason: 'stop' }],
      usage: FIXED_USAGE,
    };
    setTimeout(() => {
      if (request.url.startsWith('/v1/models') || request.url.startsWith('/v1/files')) {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    }, delayMs);
  };
}

/** Sends one chat request with a virtual key (no provider header); resolves with the status and body. */
export async function chatWithKey(gateway: TestGateway, key: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 10, ...body }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? (JSON.parse(text) as any) : undefined };
}

export const count = (statuses: number[], status: number): number => statuses.filter((value) => value === status).length;
