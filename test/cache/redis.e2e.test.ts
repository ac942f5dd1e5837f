import { randomBytes } from 'node:crypto';
import test from 'ava';
import { createClient } from '@keyv/redis';
import type { GatewayConfig } from '../../config/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, sdkClient, startGateway, type TestGateway } from '../harness.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';
import { echoUpstream } from './cache-harness.js';

// Two gateway instances with REDIS_URL share one cache: an answer stored through one is a hit on
// the other, plain or streamed, and the admin API's deletion on one empties it for both.
let fake: Fake;
let a: TestGateway;
let b: TestGateway;
let available = false;
const prefix = `test-cache-${process.pid}-${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32).toString('hex');

const config = (): Partial<GatewayConfig> => ({
  cache: { default: { mode: 'simple', max_age: 600 } },
  routes: {
    semantic: {
      strategy: { mode: 'single' },
      cache: { mode: 'semantic', embedding: { provider: 'openai', custom_host: fake.baseUrl, model: 'fake-embed' } },
      targets: [{ provider: 'openai', custom_host: fake.baseUrl }],
    },
  },
});
const environment = () => ({ REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: masterKey });

test.before(async () => {
  available = await redisAvailable(); // throws under CI=true when Redis is unreachable
  if (!available) return;
  fake = await startFake(echoUpstream().handler);
  a = await startGateway(config(), environment());
  b = await startGateway(config(), environment());
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await fake?.close();
  if (available) await clearRedisPrefix(prefix);
});

const ask = (gateway: TestGateway, text: string) =>
  sdkClient(gateway.url, fake.baseUrl)
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] })
    .withResponse();
const upstreamCalls = (text: string) => fake.requests.filter((request) => request.url.startsWith('/v1/chat') && request.json().messages?.at(-1)?.content === text).length;

test.serial('an answer stored through one instance is a hit on the other', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped');
  const stored = await ask(a, 'shared through redis');
  t.is(stored.response.headers.get('x-gateway-cache'), 'MISS');
  const served = await ask(b, 'shared through redis');
  t.is(served.response.headers.get('x-gateway-cache'), 'HIT');
  t.deepEqual(served.data, stored.data);
  t.is(upstreamCalls('shared through redis'), 1);
  // The entry lives in Redis under the prefix, with its TTL as Redis expiry.
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  try {
    const keys = await client.keys(`${prefix}:cache::account/*`);
    t.true(keys.length >= 1);
    const ttl = await client.pTTL(keys[0]);
    t.true(ttl > 0 && ttl <= 600_000, `TTL ${ttl} ms`);
  } finally {
    await client.close();
  }
});

test.serial('a stream completed on one instance is stored before its [DONE]: the other serves it at once', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped');
  const stream = await sdkClient(b.url, fake.baseUrl).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'streamed through redis' }], stream: true });
  let content = '';
  for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
  const served = await ask(a, 'streamed through redis');
  t.is(served.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(served.data.choices[0].message.content, content);
  t.is(upstreamCalls('streamed through redis'), 1);
});

test.serial('DELETE /admin/cache on one instance empties the shared cache for both', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped');
  await ask(a, 'deleted through redis');
  t.is((await ask(b, 'deleted through redis')).response.headers.get('x-gateway-cache'), 'HIT');
  const deleted = await fetch(`${a.url}/admin/cache?key=account`, { method: 'DELETE', headers: { 'x-gateway-api-key': ACCOUNT_KEY } });
  t.is(deleted.status, 200);
  t.true(((await deleted.json()) as { deleted: number }).deleted >= 1);
  t.is((await ask(b, 'deleted through redis')).response.headers.get('x-gateway-cache'), 'MISS');
});

test.serial('the semantic index is shared: a request stored through one instance is a semantic hit on the other', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped');
  const semantic = (gateway: TestGateway, text: string) =>
    sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-config': 'semantic' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] })
      .withResponse();
  const stored = await semantic(a, 'Which three rivers flow through the old town, and which bridge is the oldest one across them?');
  t.is(stored.response.headers.get('x-gateway-cache'), 'MISS');
  const near = await semantic(b, 'which bridge is the oldest one across them, and which three rivers flow through the old town?');
  t.is(near.response.headers.get('x-gateway-cache'), 'SEMANTIC-HIT');
  t.deepEqual(near.data, stored.data);
  const nearMiss = await semantic(b, 'Which four rivers flow through the old town, and which bridge is the oldest one across them?');
  t.is(nearMiss.response.headers.get('x-gateway-cache'), 'MISS');
  // The index is a Redis stream per namespace.
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  try {
    t.true((await client.xLen(`${prefix}:cache-vectors:account`)) >= 2);
  } finally {
    await client.close();
  }
});
