import type { ExecutionContext } from 'ava';
import type { TestGateway } from '../harness.js';
import { admin, chatWithKey, createKey, FIXED_COST_USD } from '../vault/vault-harness.js';

// A load across two gateway instances while a Redis primary is failed over, and what must hold
// after (test/store/cluster-gateway.e2e.test.ts, test/store/sentinel-gateway.e2e.test.ts).

/** The key's spend and reservations in nano-USD, and its admitted requests, as the admin API reports them. */
export async function usageOf(a: TestGateway, id: string): Promise<{ spent: number; reserved: number; requests: number }> {
  const usage = (await admin(a, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
  return { spent: Math.round(usage.spend_usd.total * 1e9), reserved: Math.round(usage.reserved_usd * 1e9), requests: usage.requests.total };
}

/** Waits until no reservation is left (settlements run as responses close), or 5 s. */
export async function settled(a: TestGateway, id: string) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const usage = await usageOf(a, id);
    if (usage.reserved === 0 || Date.now() > deadline) return usage;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Four loops (two per instance) send requests with `key` until `during` resolves, then stop.
 * Returns every answer's status and error code.
 */
export async function loadWhile(a: TestGateway, b: TestGateway, key: string, during: Promise<unknown>): Promise<Array<{ status: number; code?: string }>> {
  const results: Array<{ status: number; code?: string }> = [];
  let done = false;
  void during.finally(() => (done = true)).catch(() => {});
  await Promise.all(
    [a, b, a, b].map(async (gateway) => {
      while (!done) {
        const answer = await chatWithKey(gateway, key).catch((error: Error) => ({ status: 0, json: { error: { code: error.message } } }));
        results.push({ status: answer.status, ...(answer.status === 200 ? {} : { code: `${answer.json?.error?.code} (Retry-After ${'headers' in answer ? answer.headers.get('retry-after') : null})` }) });
      }
    }),
  );
  return results;
}

/** A key with a budget far from spent, on `upstream`. */
export function budgetedKey(t: ExecutionContext, a: TestGateway, name: string, upstream: string) {
  return createKey(t, a, { name, provider: 'openai', provider_key: 'sk-failover-secret-0123456789', custom_host: upstream, limits: { budget_usd: 100_000 * FIXED_COST_USD } });
}

export const COST_NANOS = Math.round(FIXED_COST_USD * 1e9);

/**
 * What must hold after a primary was killed under load: every failure is 503 `state_unavailable`,
 * nothing is charged twice, and 20 requests after the failover are admitted and charged exactly.
 */
export async function checkKilledUnderLoad(t: ExecutionContext, a: TestGateway, b: TestGateway, id: string, key: string, results: Array<{ status: number; code?: string }>): Promise<void> {
  const succeeded = results.filter((result) => result.status === 200).length;
  const failures = new Set(results.filter((result) => result.status !== 200).map((result) => `${result.status} ${result.code}`));
  t.log(`${results.length} requests during the load: ${succeeded} succeeded; failures: ${[...failures].join(', ') || 'none'}`);
  t.deepEqual([...failures].filter((failure) => failure !== '503 state_unavailable (Retry-After 1)'), [], 'every failure is the documented one');
  const during = await settled(a, id);
  // Never charged twice: what is spent is at most what succeeded. (A request whose settlement hit the
  // failover keeps its reservation, and the killed primary may have acknowledged writes its replica
  // had not received yet: Redis replicates asynchronously.)
  t.true(during.spent <= succeeded * COST_NANOS, `spent ${during.spent} for ${succeeded} answers`);
  t.true(during.requests <= results.length, 'no admission counted twice');
  // After the failover: admission and settlement on the new primary, exact.
  const after = await Promise.all(Array.from({ length: 20 }, (_, index) => chatWithKey(index % 2 ? a : b, key)));
  t.deepEqual(
    after.map((answer) => answer.status),
    Array.from({ length: 20 }, () => 200),
  );
  const now = await settled(a, id);
  t.is(now.spent - during.spent, 20 * COST_NANOS);
  t.is(now.requests - during.requests, 20);
  t.is(now.reserved, during.reserved);
}


