import test from 'ava';
import OpenAI from 'openai';
import { bannedWords } from '../../plugins/guardrails/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { loggedOnce, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { ECHO_COST_USD, echoUpstream } from './cache-harness.js';

// The cache per caller: each key reads and writes its own namespace unless a route shares one on
// purpose; a hit costs the key nothing; guardrails still decide; the admin API empties it (serial:
// emptying the whole cache must not race the other tests).
let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(echoUpstream().handler);
  gateway = await startGateway({
    cache: { default: { mode: 'simple', max_age: 600 } },
    policies: {
      'no-secret': { input: [bannedWords({ words: ['forbiddeninput'] })], output: [bannedWords({ words: ['secretword'] })] },
    },
    routes: {
      team: { strategy: { mode: 'single' }, cache: { mode: 'simple', namespace: 'team' }, targets: [{ provider: 'openai', custom_host: fake.baseUrl }] },
      uncached: { strategy: { mode: 'single' }, cache: { mode: 'off' }, targets: [{ provider: 'openai', custom_host: fake.baseUrl }] },
    },
  });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

let keys = 0;
/** A virtual key bound to the fake, granted the configured routes (a key takes no other route), with `extra` fields (limits, policy). */
const key = (t: Parameters<typeof createKey>[0], extra: Record<string, unknown> = {}) =>
  createKey(t, gateway, { name: `cache-key-${++keys}`, provider: 'openai', provider_key: PROVIDER_KEY, custom_host: fake.baseUrl, allowed_routes: ['team', 'uncached'], ...extra });

/** The SDK with a virtual key as its only key (a base URL and an API key, as tools use it). */
const keyClient = (virtualKey: string) => new OpenAI({ apiKey: virtualKey, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000 });

/** A virtual key sending `x-gateway-config: <route>`; the route's target takes the caller's Bearer token. */
const routeClient = (virtualKey: string, route: string) =>
  new OpenAI({ apiKey: PROVIDER_KEY, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': virtualKey, 'x-gateway-config': route } });

const ask = (client: OpenAI, text: string) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }).withResponse();
const cacheOf = async (answer: ReturnType<typeof ask>) => (await answer).response.headers.get('x-gateway-cache');
const upstreamCalls = (text: string) => fake.requests.filter((request) => request.json().messages?.at(-1)?.content === text).length;

test('two keys never read each other’s answers; a route that names a namespace shares it on purpose', async (t) => {
  const first = keyClient((await key(t)).key);
  const second = keyClient((await key(t)).key);
  t.is(await cacheOf(ask(first, 'isolated')), 'MISS');
  t.is(await cacheOf(ask(second, 'isolated')), 'MISS');
  t.is(await cacheOf(ask(first, 'isolated')), 'HIT');
  t.is(await cacheOf(ask(second, 'isolated')), 'HIT');
  t.is(upstreamCalls('isolated'), 2);

  // Inline routes are the account key's; a virtual key names a configured route.
  const firstShared = routeClient((await key(t)).key, 'team');
  const secondShared = routeClient((await key(t)).key, 'team');
  const stored = await ask(firstShared, 'shared on purpose');
  t.is(stored.response.headers.get('x-gateway-cache'), 'MISS');
  const shared = await ask(secondShared, 'shared on purpose');
  t.is(shared.response.headers.get('x-gateway-cache'), 'HIT');
  t.deepEqual(shared.data, stored.data);
  t.is(upstreamCalls('shared on purpose'), 1);
});

test('a route with cache off is not cached, whatever the default', async (t) => {
  const client = routeClient((await key(t)).key, 'uncached');
  t.is(await cacheOf(ask(client, 'route says off')), null);
  t.is(await cacheOf(ask(client, 'route says off')), null);
  t.is(upstreamCalls('route says off'), 2);
});

/** The key's usage once no reservation is left in flight. */
async function settledUsage(id: string): Promise<{ spend_usd: { total: number }; reserved_usd: number; requests: { total: number } }> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
    if ((usage.reserved_usd === 0 && usage.spend_usd.total > 0) || Date.now() > deadline) return usage;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('hits cost the key nothing against its budget: the spend stays that of the one miss', async (t) => {
  const { id, key: value } = await key(t, { limits: { budget_usd: 1 } });
  const client = keyClient(value);
  const missTrace = traceId('cache-budget');
  await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'budgeted' }] }, { headers: { 'x-gateway-trace-id': missTrace } });
  await loggedOnce(gateway, missTrace);
  const afterMiss = await settledUsage(id);
  t.is(Math.round(afterMiss.spend_usd.total * 1e9), Math.round(ECHO_COST_USD * 1e9));
  const hitTraces = [traceId('cache-budget'), traceId('cache-budget'), traceId('cache-budget')];
  for (const trace of hitTraces) {
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'budgeted' }] }, { headers: { 'x-gateway-trace-id': trace } }).withResponse();
    t.is(response.headers.get('x-gateway-cache'), 'HIT');
  }
  for (const trace of hitTraces) t.is((await loggedOnce(gateway, trace)).cache?.savedUsd, ECHO_COST_USD);
  const afterHits = await settledUsage(id);
  t.is(afterHits.spend_usd.total, afterMiss.spend_usd.total);
  t.is(afterHits.reserved_usd, 0);
  t.is(afterHits.requests.total, 4, 'hits still count as requests against the rate limits');
  t.is(upstreamCalls('budgeted'), 1);
});

test('an answer an output guardrail denies is not stored; an input denial is refused before the cache', async (t) => {
  const guarded = keyClient((await key(t, { guardrail_policy: 'no-secret' })).key);
  for (let round = 0; round < 2; round++) {
    const denied = await ask(guarded, 'say the secretword');
    t.is(denied.data.choices[0].finish_reason, 'content_filter');
    t.is(denied.response.headers.get('x-gateway-cache'), 'MISS');
  }
  t.is(upstreamCalls('say the secretword'), 2);
  const stream = await guarded.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream the secretword' }], stream: true });
  for await (const _chunk of stream) {
    // read to the end
  }
  t.is(await cacheOf(ask(guarded, 'stream the secretword')), 'MISS');
  const refused = await ask(guarded, 'forbiddeninput here').catch((error) => error);
  t.is(refused.status, 400);
  t.is(refused.error.code, 'guardrail_denied');
  t.is(upstreamCalls('forbiddeninput here'), 0);
});

test('output guardrails judge a hit: an answer stored for one key is filtered for a key whose policy denies it', async (t) => {
  const open = routeClient((await key(t)).key, 'team');
  const guarded = routeClient((await key(t, { guardrail_policy: 'no-secret' })).key, 'team');
  const stored = await ask(open, 'shared secretword');
  t.is(stored.data.choices[0].finish_reason, 'stop');
  const judged = await ask(guarded, 'shared secretword');
  t.is(judged.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(judged.data.choices[0].finish_reason, 'content_filter');
  t.is(judged.data.choices[0].message.content, null);
  t.is(upstreamCalls('shared secretword'), 1);
});

test.serial('DELETE /admin/cache empties one key’s namespace, a shared namespace, or everything', async (t) => {
  const first = await key(t);
  const second = await key(t);
  const firstClient = keyClient(first.key);
  const secondClient = keyClient(second.key);
  const sharedClient = routeClient(first.key, 'team');
  await ask(firstClient, 'to delete');
  await ask(secondClient, 'to delete');
  await ask(sharedClient, 'to delete in team');

  const byKey = await admin(gateway, 'DELETE', `/admin/cache?key=${first.id}`);
  t.is(byKey.status, 200);
  t.deepEqual(byKey.json, { deleted: 1, namespace: `key:${first.id}` });
  t.is(await cacheOf(ask(firstClient, 'to delete')), 'MISS');
  t.is(await cacheOf(ask(secondClient, 'to delete')), 'HIT');
  t.is(await cacheOf(ask(sharedClient, 'to delete in team')), 'HIT');

  const byNamespace = await admin(gateway, 'DELETE', '/admin/cache?namespace=team');
  t.is(byNamespace.json.namespace, 'shared:team');
  t.true(byNamespace.json.deleted >= 1);
  t.is(await cacheOf(ask(sharedClient, 'to delete in team')), 'MISS');

  const everything = await admin(gateway, 'DELETE', '/admin/cache?all=true');
  t.true(everything.json.deleted >= 2);
  t.is(everything.json.namespace, null);
  t.is(await cacheOf(ask(secondClient, 'to delete')), 'MISS');
});

test('DELETE /admin/cache needs the account key and exactly one selector', async (t) => {
  const { key: value } = await key(t);
  t.is((await admin(gateway, 'DELETE', '/admin/cache?all=true', undefined, value)).status, 403);
  t.is((await admin(gateway, 'DELETE', '/admin/cache?all=true', undefined, 'wrong-key-0123456789')).status, 401);
  for (const query of ['', '?namespace=a&key=b', '?all=yes', '?namespace=a/b', '?key=']) {
    const refused = await admin(gateway, 'DELETE', `/admin/cache${query}`);
    t.is(refused.status, 400, query);
    t.is(refused.json.error.code, 'invalid_query', query);
  }
});

test('the OpenAPI document describes DELETE /admin/cache, the x-gateway-cache request header and the cache response headers', async (t) => {
  const document: any = await (await fetch(`${gateway.url}/openapi.json`)).json();
  const deletion = document.paths['/admin/cache'].delete;
  t.deepEqual(deletion.parameters.map((parameter: { name: string }) => parameter.name), ['namespace', 'key', 'all']);
  t.deepEqual(Object.keys(deletion.responses), ['200', '400', '401', '403']);
  t.deepEqual(document.components.parameters['Gateway-cache'].schema.enum, ['no-store', 'refresh', 'only-if-cached']);
  const chat = document.paths['/v1/chat/completions'].post;
  t.deepEqual(chat.responses['200'].headers['x-gateway-cache'], { $ref: '#/components/headers/Cache' });
  t.deepEqual(chat.responses['200'].headers.age, { $ref: '#/components/headers/Age' });
  t.regex(chat.responses['504'].description, /cache_miss/);
});
