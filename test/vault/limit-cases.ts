import type { ExecutionContext } from 'ava';
import { promptTokensBound } from '../../core/vault/estimate.js';
import type { TestGateway } from '../harness.js';
import { admin, chatWithKey, count, createKey, FIXED_COST_USD, FIXED_MESSAGES, FIXED_USAGE } from './vault-harness.js';

type SerialTest = (title: string, implementation: (t: ExecutionContext) => void | Promise<void>) => void;

/** Two handles on the state under test: two instances sharing Redis, or one embedded instance twice. */
export interface LimitTarget {
  readonly a: TestGateway;
  readonly b: TestGateway;
  readonly upstream: string;
}

let sequence = 0;
const uniqueName = (label: string) => `${label}-${process.pid}-${++sequence}`;

/** Waits until no reservation is left on the key (settlement runs when each response closes). */
async function settledUsage(gateway: TestGateway, id: string): Promise<any> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
    if (usage.reserved_usd === 0 || Date.now() > deadline) return usage;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The limit cases the issue asks for, registered on `test` against `target()`. */
export function registerLimitCases(serialTest: SerialTest, target: () => LimitTarget, label: string): void {
  serialTest(`${label}: the fixed request's prompt bound is exactly its reported prompt tokens`, (t) => {
    t.is(promptTokensBound({ messages: FIXED_MESSAGES }), FIXED_USAGE.prompt_tokens);
  });

  serialTest(`${label}: 50 concurrent requests against a budget for exactly 10: 10 succeed, spend stays within the budget`, async (t) => {
    const { a, b, upstream } = target();
    const { id, key } = await createKey(t, a, {
      name: uniqueName('budget'),
      provider: 'openai',
      provider_key: 'sk-budget-secret-0123456789abcdef',
      custom_host: upstream,
      limits: { budget_usd: 10 * FIXED_COST_USD },
    });
    const results = await Promise.all(Array.from({ length: 50 }, (_, index) => chatWithKey(index % 2 ? b : a, key)));
    const statuses = results.map((result) => result.status);
    t.is(count(statuses, 200), 10, `statuses: ${statuses.join(',')}`);
    t.is(count(statuses, 403), 40);
    const refused = results.find((result) => result.status === 403);
    t.like(refused?.json.error, { type: 'permission_error', code: 'budget_exceeded' });
    const usage = await settledUsage(a, id);
    t.is(usage.reserved_usd, 0);
    t.true(usage.spend_usd.total <= 10 * FIXED_COST_USD + 1e-12, `spent ${usage.spend_usd.total}`);
    t.is(Math.round(usage.spend_usd.total * 1e9), Math.round(10 * FIXED_COST_USD * 1e9));
    t.is(usage.requests.total, 10);
    t.is(usage.remaining_usd, 0);
    // Exhausted: the next request is refused at once, on either instance.
    t.is((await chatWithKey(b, key)).status, 403);
  });

  serialTest(`${label}: 50 concurrent requests against 10 per minute: exactly 10 succeed, the rest get 429 with Retry-After`, async (t) => {
    const { a, b, upstream } = target();
    const { key } = await createKey(t, a, {
      name: uniqueName('rpm'),
      provider: 'openai',
      provider_key: 'sk-rpm-secret-0123456789abcdef',
      custom_host: upstream,
      limits: { requests_per_minute: 10 },
    });
    const results = await Promise.all(Array.from({ length: 50 }, (_, index) => chatWithKey(index % 2 ? a : b, key)));
    const statuses = results.map((result) => result.status);
    t.is(count(statuses, 200), 10, `statuses: ${statuses.join(',')}`);
    t.is(count(statuses, 429), 40);
    const limited = results.find((result) => result.status === 429)!;
    t.like(limited.json.error, { type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    t.true(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
    t.is(limited.headers.get('x-ratelimit-limit-requests'), '10');
    t.is(limited.headers.get('x-ratelimit-remaining-requests'), '0');
    t.regex(limited.headers.get('x-ratelimit-reset-requests') ?? '', /^\d+s$/);
  });

  serialTest(`${label}: pass-through requests count against request limits and budgets`, async (t) => {
    const { a, b, upstream } = target();
    const limited = await createKey(t, a, {
      name: uniqueName('pass-rpm'),
      provider: 'openai',
      provider_key: 'sk-pass-secret-0123456789abcdef',
      custom_host: upstream,
      limits: { requests_per_minute: 3 },
    });
    // /v1/files and /v1/batches are not unified operations: the gateway passes them through.
    const passthrough = (gateway: TestGateway, key: string, method = 'GET', path = '/v1/files', body?: unknown) =>
      fetch(`${gateway.url}${path}`, {
        method,
        headers: { 'x-gateway-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      }).then(async (response) => ({ status: response.status, text: await response.text() }));
    t.is((await passthrough(a, limited.key)).status, 200);
    t.is((await chatWithKey(b, limited.key)).status, 200);
    t.is((await passthrough(b, limited.key)).status, 200);
    const fourth = await passthrough(a, limited.key);
    t.is(fourth.status, 429, 'the pass-through request is refused once the limit is used');
    t.is((await chatWithKey(b, limited.key)).status, 429);

    const budgeted = await createKey(t, a, {
      name: uniqueName('pass-budget'),
      provider: 'openai',
      provider_key: 'sk-pass-secret-0123456789abcdef',
      custom_host: upstream,
      limits: { budget_usd: 2 * FIXED_COST_USD },
    });
    const legacy = { model: 'gpt-4o-mini', input: 'hi', max_output_tokens: 10 };
    const first = await passthrough(a, budgeted.key, 'POST', '/v1/batches', legacy);
    t.is(first.status, 200);
    t.is(JSON.parse(first.text).usage.total_tokens, FIXED_USAGE.total_tokens, 'the pass-through body reaches the client unchanged');
    t.is((await passthrough(b, budgeted.key, 'POST', '/v1/batches', legacy)).status, 200);
    const usage = await settledUsage(a, budgeted.id);
    t.is(Math.round(usage.spend_usd.total * 1e9), Math.round(2 * FIXED_COST_USD * 1e9), 'pass-through usage is charged');
    const third = await passthrough(b, budgeted.key, 'POST', '/v1/batches', legacy);
    t.is(third.status, 403);
    t.is(JSON.parse(third.text).error.code, 'budget_exceeded');
    t.is((await chatWithKey(a, budgeted.key)).status, 403);
  });
}
