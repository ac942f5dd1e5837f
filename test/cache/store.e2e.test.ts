import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { SqliteCacheStore } from '../../core/cache/store.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, sdkClient, startGateway } from '../harness.js';
import { echoUpstream } from './cache-harness.js';

// The embedded store: expiry on the gateway's clock, answers that survive a restart, and a size cap
// kept by evicting the least recently used answers.
let fake: Fake;

test.before(async () => {
  fake = await startFake(echoUpstream().handler);
});

test.after.always(async () => {
  await fake?.close();
});

const ask = (url: string, text: string) =>
  sdkClient(url, fake.baseUrl)
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] })
    .withResponse();

test('an answer is served until max_age has passed on the gateway’s clock, with its Age; then it is asked for again', async (t) => {
  let now = Date.parse('2026-11-23T12:00:00Z');
  const gateway = await startGateway({ cache: { default: { mode: 'simple', max_age: 60 } } }, {}, { clock: { now: () => now } });
  try {
    const first = await ask(gateway.url, 'ttl');
    t.is(first.response.headers.get('x-gateway-cache'), 'MISS');
    now += 30_500;
    const young = await ask(gateway.url, 'ttl');
    t.is(young.response.headers.get('x-gateway-cache'), 'HIT');
    t.is(young.response.headers.get('age'), '30');
    t.deepEqual(young.data, first.data);
    now += 29_499; // 59.999 s old
    t.is((await ask(gateway.url, 'ttl')).response.headers.get('age'), '59');
    now += 1; // 60 s: expired
    const expired = await ask(gateway.url, 'ttl');
    t.is(expired.response.headers.get('x-gateway-cache'), 'MISS');
    t.not(expired.data.choices[0].message.content, first.data.choices[0].message.content);
    const renewed = await ask(gateway.url, 'ttl');
    t.is(renewed.response.headers.get('age'), '0');
    t.deepEqual(renewed.data, expired.data);
  } finally {
    await gateway.close();
  }
});

test('the embedded cache survives a restart: a new gateway on the same data directory serves the stored answer', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-cache-restart-'));
  const config = { cache: { default: { mode: 'simple' as const } } };
  const before = await startGateway(config, { GATEWAY_DATA_DIR: dataDir });
  const stored = await ask(before.url, 'survives restarts');
  t.is(stored.response.headers.get('x-gateway-cache'), 'MISS');
  await before.close();
  const after = await startGateway(config, { GATEWAY_DATA_DIR: dataDir });
  try {
    const served = await ask(after.url, 'survives restarts');
    t.is(served.response.headers.get('x-gateway-cache'), 'HIT');
    t.deepEqual(served.data, stored.data);
  } finally {
    await after.close();
  }
});

test('past cache.maxBytes the least recently used answers are evicted; recently used ones stay', async (t) => {
  const maxBytes = 4000;
  const gateway = await startGateway({ cache: { default: { mode: 'simple' }, maxBytes } });
  try {
    await ask(gateway.url, 'evict kept');
    const sizes: number[] = [];
    for (let index = 0; index < 12; index++) {
      await ask(gateway.url, `evict filler ${index}`);
      // Reading the first answer again keeps it recently used.
      t.is((await ask(gateway.url, 'evict kept')).response.headers.get('x-gateway-cache'), 'HIT');
      sizes.push(((await gateway.gateway.cache.store()) as SqliteCacheStore).bytes);
    }
    t.true(sizes.every((size) => size <= maxBytes), `stored bytes ${sizes.join(', ')} stay under ${maxBytes}`);
    t.is((await ask(gateway.url, 'evict filler 11')).response.headers.get('x-gateway-cache'), 'HIT', 'the newest answer is kept');
    t.is((await ask(gateway.url, 'evict filler 0')).response.headers.get('x-gateway-cache'), 'MISS', 'the least recently used answer was evicted');
    const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
    t.regex(metrics, /gateway_cache_evictions_total [1-9]/);
  } finally {
    await gateway.close();
  }
});

test('an answer over cache.maxEntryBytes is served but not stored', async (t) => {
  const gateway = await startGateway({ cache: { default: { mode: 'simple' }, maxEntryBytes: 100 } });
  try {
    t.is((await ask(gateway.url, 'too large to keep')).response.headers.get('x-gateway-cache'), 'MISS');
    t.is((await ask(gateway.url, 'too large to keep')).response.headers.get('x-gateway-cache'), 'MISS');
    const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
    t.regex(metrics, /gateway_cache_stores_total\{result="too_large"\} 2/);
  } finally {
    await gateway.close();
  }
});
