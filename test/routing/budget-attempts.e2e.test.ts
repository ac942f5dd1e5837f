import type { ServerResponse } from 'node:http';
import test from 'ava';
import { openai } from '../../plugins/providers/openai/index.js';
import { costOf } from '../../core/vault/pricing.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { admin, createKey, FIXED_COST_USD, FIXED_MESSAGES, FIXED_USAGE, fixedUsageHandler } from '../vault/vault-harness.js';

// Budgets under fallback: a failed attempt whose error body reports usage is charged too, priced
// with its own model, and the answer the client got is charged once.
let first: Fake;
let second: Fake;
let gateway: TestGateway;

/** Usage the failing target reports in its 500 body (a failure after partial generation). */
const FAILED_USAGE = { prompt_tokens: 40, completion_tokens: 25, total_tokens: 65 };

const fail500WithUsage = (_request: unknown, response: ServerResponse) => {
  response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'generation failed', type: 'server_error', code: null }, usage: FAILED_USAGE }));
};
const fail503 = (_request: unknown, response: ServerResponse) => {
  response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"down","type":"server_error","code":null}}');
};

const errorFirstEventWithUsage = (_request: unknown, response: ServerResponse) => {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(`data: ${JSON.stringify({ error: { message: 'overloaded mid-generation', type: 'server_error' }, usage: FAILED_USAGE })}\n\n`);
};
const streamWithUsage = (_request: unknown, response: ServerResponse) => {
  const chunk = (fields: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1741569952, model: 'gpt-4o-mini', ...fields })}\n\n`;
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.write(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] }));
  response.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  response.write(chunk({ choices: [], usage: FIXED_USAGE }));
  response.end('data: [DONE]\n\n');
};

test.before(async () => {
  first = await startFake();
  second = await startFake();
  gateway = await startGateway({
    providers: [openai()],
    routes: {
      budgeted: {
        strategy: { mode: 'fallback' },
        targets: [
          { name: 'first', provider: 'openai', custom_host: first.baseUrl, override_params: { model: 'gpt-4o' } },
          { name: 'second', provider: 'openai', custom_host: second.baseUrl, override_params: { model: 'gpt-4o-mini' } },
        ],
      },
    },
  });
});

test.after.always(async () => {
  await gateway?.close();
  await first?.close();
  await second?.close();
});

async function chat(key: string, extra: Record<string, unknown> = {}) {
  const trace = traceId('budget-attempts');
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, 'x-gateway-config': 'budgeted', 'x-gateway-trace-id': trace },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 10, ...extra }),
  });
  await response.text();
  return { status: response.status, headers: response.headers, trace };
}

/** The key's total spend once its reservation is settled. */
async function settledSpend(id: string): Promise<number> {
  const deadline = Date.now() + 3000;
  let usage;
  do {
    usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
  } while ((usage.spend_usd.total === 0 || usage.reserved_usd !== 0) && Date.now() < deadline);
  return usage.spend_usd.total as number;
}

const nanos = (usd: number): number => Math.round(usd * 1e9);

test.serial('a 500 whose body reports usage, then a 200: the key is charged for both, each at its own model, and the attempts carry their usage', async (t) => {
  first.handle(fail500WithUsage);
  second.handle(fixedUsageHandler(0));
  const { id, key } = await createKey(t, gateway, { name: 'failed-usage', provider: 'openai', provider_key: 'sk-failed-usage-0123456789', allowed_routes: ['budgeted'], limits: { budget_usd: 1 } });
  const result = await chat(key);
  t.is(result.status, 200);
  t.is(result.headers.get('x-gateway-attempts'), '2');
  t.is(first.requests.length, 1);
  t.is(second.requests.length, 1);
  const failedUsd = costOf(gateway.gateway.vault.prices.price('openai', 'gpt-4o')!, { promptTokens: 40, completionTokens: 25 });
  t.true(failedUsd > 0);
  const expected = nanos(failedUsd + FIXED_COST_USD);
  t.is(nanos(await settledSpend(id)), expected);
  const entry = await loggedOnce(gateway, result.trace);
  t.is(nanos(entry.costUsd!), expected);
  t.deepEqual(entry.attempts?.[0].usage, FAILED_USAGE);
  t.deepEqual(entry.attempts?.[1].usage, FIXED_USAGE);
});

test.serial('a plain fallback whose failure reports no usage is charged once, for the answer', async (t) => {
  first.handle(fail503);
  second.handle(fixedUsageHandler(0));
  const { id, key } = await createKey(t, gateway, { name: 'plain-fallback', provider: 'openai', provider_key: 'sk-plain-fallback-0123456789', allowed_routes: ['budgeted'], limits: { budget_usd: 1 } });
  const result = await chat(key);
  t.is(result.status, 200);
  t.is(result.headers.get('x-gateway-attempts'), '2');
  t.is(nanos(await settledSpend(id)), nanos(FIXED_COST_USD));
  const entry = await loggedOnce(gateway, result.trace);
  t.is(nanos(entry.costUsd!), nanos(FIXED_COST_USD));
  t.is(entry.attempts?.[0].usage, undefined);
});

test.serial('a stream whose first event is an error reporting usage, then a stream from the next target: both are charged', async (t) => {
  first.handle(errorFirstEventWithUsage);
  second.handle(streamWithUsage);
  const { id, key } = await createKey(t, gateway, { name: 'stream-usage', provider: 'openai', provider_key: 'sk-stream-usage-0123456789', allowed_routes: ['budgeted'], limits: { budget_usd: 1 } });
  const result = await chat(key, { stream: true, stream_options: { include_usage: true } });
  t.is(result.status, 200);
  t.is(result.headers.get('x-gateway-route-target'), 'second');
  const failedUsd = costOf(gateway.gateway.vault.prices.price('openai', 'gpt-4o')!, { promptTokens: 40, completionTokens: 25 });
  const expected = nanos(failedUsd + FIXED_COST_USD);
  t.is(nanos(await settledSpend(id)), expected);
  const entry = await loggedOnce(gateway, result.trace);
  t.like(entry.attempts?.[0], { status: 502, errorCode: 'upstream_stream_error', usage: FAILED_USAGE });
  t.is(nanos(entry.costUsd!), expected);
});
