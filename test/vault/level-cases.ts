import type { ExecutionContext } from 'ava';
import { ACCOUNT_KEY } from '../harness.js';
import { count, FIXED_COST_USD, FIXED_MESSAGES } from './vault-harness.js';

type SerialTest = (title: string, implementation: (t: ExecutionContext) => void | Promise<void>) => void;

/** A gateway as these cases reach it: its URL (an in-process instance, or a `GATEWAY_WORKERS` child). */
export interface Instance {
  readonly url: string;
}

/** Two handles on the state under test (two instances on Redis, or one cluster of workers twice), a fast fake and a slow one (answers after 1.5 s). */
export interface LevelTarget {
  readonly a: Instance;
  readonly b: Instance;
  readonly upstream: string;
  readonly slowUpstream: string;
}

let sequence = 0;
const unique = (label: string) => `${label}-${process.pid}-${Date.now().toString(36)}-${++sequence}`;

export async function call(instance: Instance, method: string, path: string, body?: unknown) {
  const response = await fetch(`${instance.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as any) : undefined };
}

async function created(t: ExecutionContext, instance: Instance, path: string, body: unknown): Promise<any> {
  const answer = await call(instance, 'POST', path, body);
  t.is(answer.status, 201, JSON.stringify(answer.json));
  return answer.json;
}

/** A key on the fake, with the given owner and limits. */
async function key(t: ExecutionContext, instance: Instance, upstream: string, fields: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
  return created(t, instance, '/admin/virtual-keys', { name: unique('key'), provider: 'openai', provider_key: 'sk-levels-secret-0123456789abcdef', custom_host: upstream, ...fields });
}

/** One chat request (the fixed one: 60 prompt tokens, 10 output, $0.000015) with a virtual key. */
export async function chat(instance: Instance, value: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const response = await fetch(`${instance.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': value, connection: 'close', ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 10, ...body }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? (JSON.parse(text) as any) : undefined };
}

/** 100 requests at once, alternating between the two instances; each picks its key, body and headers by index. */
async function burst(target: LevelTarget, send: (instance: Instance, index: number) => ReturnType<typeof chat>) {
  const results = await Promise.all(Array.from({ length: 100 }, (_, index) => send(index % 2 ? target.b : target.a, index)));
  return results;
}

/** Exactly 10 of the burst admitted, every other one refused by `level` (429 or 403 as the limit says). */
function exactlyTen(t: ExecutionContext, results: Awaited<ReturnType<typeof burst>>, level: string, refusal: { status: number; limit: string }) {
  const statuses = results.map((result) => result.status);
  t.is(count(statuses, 200), 10, `statuses: ${statuses.join(',')}`);
  t.is(count(statuses, refusal.status), 90, `statuses: ${statuses.join(',')}`);
  const refused = results.find((result) => result.status === refusal.status)!;
  t.is(refused.json.error.budget.level, level);
  t.is(refused.json.error.budget.limit, refusal.limit);
}

/** The case for each level the issue asks for: 100 concurrent requests against a limit that admits exactly 10. */
export function registerLevelCases(serialTest: SerialTest, target: () => LevelTarget, label: string): void {
  serialTest(`${label}: organization budget for exactly 10 requests: 100 concurrent → 10 admitted`, async (t) => {
    const { a, upstream } = target();
    const team = await created(t, a, '/admin/teams', { name: unique('org-team') });
    const keys = [await key(t, a, upstream), await key(t, a, upstream, { team_id: team.id })];
    t.is((await call(a, 'PATCH', '/admin/organization', { limits: { budget_usd: 10 * FIXED_COST_USD } })).status, 200);
    // A change to the organization's limits applies everywhere within a second (docs/limits.md).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    try {
      exactlyTen(t, await burst(target(), (instance, index) => chat(instance, keys[index % 2]!.key)), 'organization', { status: 403, limit: 'budget_usd' });
    } finally {
      await call(a, 'PATCH', '/admin/organization', { limits: null });
      await new Promise((resolve) => setTimeout(resolve, 1100));
    }
  });

  serialTest(`${label}: team limit of 10 requests per minute over three keys: 100 concurrent → 10 admitted`, async (t) => {
    const { a, upstream } = target();
    const team = await created(t, a, '/admin/teams', { name: unique('team'), limits: { requests_per_minute: 10 } });
    const keys = [await key(t, a, upstream, { team_id: team.id }), await key(t, a, upstream, { team_id: team.id }), await key(t, a, upstream, { team_id: team.id })];
    const results = await burst(target(), (instance, index) => chat(instance, keys[index % 3]!.key));
    exactlyTen(t, results, 'team', { status: 429, limit: 'requests_per_minute' });
    const refused = results.find((result) => result.status === 429)!;
    t.is(refused.json.error.budget.level_id, team.id);
    t.is(refused.headers.get('x-ratelimit-limit-requests'), '10');
    t.truthy(refused.headers.get('retry-after'));
  });

  serialTest(`${label}: user limit of 10 requests' tokens per minute over keys in two teams: 100 concurrent → 10 admitted`, async (t) => {
    const { a, upstream } = target();
    // 60 prompt bytes ≈ 15 tokens + max_tokens 55 = 70 tokens estimated, exactly the 70 the fake reports: 700 admits 10.
    const user = await created(t, a, '/admin/users', { email: `${unique('user')}@example.com`, limits: { tokens_per_minute: 700 } });
    const [first, second] = [await created(t, a, '/admin/teams', { name: unique('ut1') }), await created(t, a, '/admin/teams', { name: unique('ut2') })];
    const keys = [await key(t, a, upstream, { team_id: first.id, user_id: user.id }), await key(t, a, upstream, { team_id: second.id, user_id: user.id })];
    exactlyTen(t, await burst(target(), (instance, index) => chat(instance, keys[index % 2]!.key, { max_tokens: 55 })), 'user', { status: 429, limit: 'tokens_per_minute' });
  });

  serialTest(`${label}: key limit of 10 requests in flight: 100 concurrent slow requests → 10 admitted`, async (t) => {
    const { a, slowUpstream } = target();
    const limited = await key(t, a, slowUpstream, { limits: { max_concurrent: 10 } });
    exactlyTen(t, await burst(target(), (instance) => chat(instance, limited.key)), 'key', { status: 429, limit: 'max_concurrent' });
    // Each request in flight was released when it ended: the next ones are admitted again.
    t.is((await chat(a, limited.key)).status, 200);
  });

  serialTest(`${label}: end-user budget (a team's rule) for exactly 10 requests over two keys: 100 concurrent → 10 admitted; another end user is not held back`, async (t) => {
    const { a, b, upstream } = target();
    const team = await created(t, a, '/admin/teams', { name: unique('eu'), limits: { end_users: { budget_usd: 10 * FIXED_COST_USD, budget_period: 'day' } } });
    const keys = [await key(t, a, upstream, { team_id: team.id }), await key(t, a, upstream, { team_id: team.id })];
    exactlyTen(t, await burst(target(), (instance, index) => chat(instance, keys[index % 2]!.key, { user: 'alice' })), 'end_user', { status: 403, limit: 'budget_usd' });
    t.is((await chat(b, keys[0]!.key, { user: 'bob' })).status, 200, 'bob has a budget of his own');
    t.is((await chat(b, keys[1]!.key, { user: 'alice' })).status, 403);
  });

  serialTest(`${label}: tag limit (a key's rule) of 10 requests per minute for feature=search: 100 concurrent → 10 admitted; other values by "*"`, async (t) => {
    const { a, b, upstream } = target();
    const tagged = await key(t, a, upstream, { limits: { tags: { feature: { search: { requests_per_minute: 10 }, '*': { requests_per_minute: 1000 } } } } });
    const metadata = (feature: string) => ({ 'x-gateway-metadata': JSON.stringify({ feature }) });
    exactlyTen(t, await burst(target(), (instance) => chat(instance, tagged.key, {}, metadata('search'))), 'tag', { status: 429, limit: 'requests_per_minute' });
    t.is((await chat(b, tagged.key, {}, metadata('chat'))).status, 200, 'another tag value is counted apart');
    t.is((await chat(b, tagged.key)).status, 200, 'a request without the tag is not limited by it');
  });

  serialTest(`${label}: a user with keys in two teams is capped by the user budget; team keys charge the user too`, async (t) => {
    const { a, b, upstream } = target();
    const user = await created(t, a, '/admin/users', { email: `${unique('capped')}@example.com`, limits: { budget_usd: 4 * FIXED_COST_USD } });
    const teams = [await created(t, a, '/admin/teams', { name: unique('cap1') }), await created(t, a, '/admin/teams', { name: unique('cap2') })];
    const keys = [await key(t, a, upstream, { team_id: teams[0].id, user_id: user.id }), await key(t, a, upstream, { team_id: teams[1].id, user_id: user.id })];
    const statuses: number[] = [];
    for (let index = 0; index < 6; index++) statuses.push((await chat(index % 2 ? b : a, keys[index % 2]!.key)).status);
    t.deepEqual(statuses, [200, 200, 200, 200, 403, 403], 'four requests in all, whichever team each key belongs to');
    const other = await key(t, a, upstream, { team_id: teams[0].id });
    t.is((await chat(a, other.key)).status, 200, 'another key of the same team is not the user\'s');
  });
}
