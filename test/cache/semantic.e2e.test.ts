import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { GatewayConfig } from '../../config/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, loggedOnce, sdkClient, startGateway, type TestGateway, traceId } from '../harness.js';
import { bagOfWords, echoUpstream } from './cache-harness.js';

// Semantic mode with a deterministic embeddings provider (the fake's bag-of-words vectors, called
// through the openai provider plugin): a request whose words are the same as a stored one's is a
// SEMANTIC-HIT; a near miss (another number, a negation) is refused even though its similarity
// passes the default threshold; other parameters never share an answer.
let fake: Fake;
let gateway: TestGateway;

const BASE =
  'Our quarterly planning meeting covered the marketing budget for the spring campaign, the hiring plan for 2 engineers, the new office lease and the travel policy, which is final. Summarise the decisions in a short paragraph for the team.';
const REORDERED =
  'summarise the decisions in a short paragraph for the team: our quarterly planning meeting covered the marketing budget for the spring campaign, the new office lease, the hiring plan for 2 engineers and the travel policy, which is final!';
const OTHER_NUMBER = BASE.replace('2 engineers', '3 engineers');
const NEGATED = BASE.replace('which is final', 'which is not final');
const SYNONYM = BASE.replace('short paragraph', 'brief paragraph');
const UNRELATED = 'Write a haiku about the sea at night, with the moon over the harbour and a lighthouse keeper who cannot sleep.';

/** The cosine similarity of two texts under the fake's embedding. */
function similarity(left: string, right: string): number {
  const a = bagOfWords(left);
  const b = bagOfWords(right);
  const dot = a.reduce((sum, value, index) => sum + value * b[index], 0);
  return dot / Math.sqrt(a.reduce((sum, value) => sum + value * value, 0) * b.reduce((sum, value) => sum + value * value, 0));
}

const semanticRoute = (threshold?: number) => ({
  strategy: { mode: 'single' as const },
  cache: { mode: 'semantic' as const, ...(threshold === undefined ? {} : { threshold }), embedding: { provider: 'openai', custom_host: fake.baseUrl, model: 'fake-embed' } },
  targets: [{ provider: 'openai', custom_host: fake.baseUrl }],
});
const config = (): Partial<GatewayConfig> => ({
  routes: {
    semantic: semanticRoute(),
    strict: { ...semanticRoute(0.999), cache: { ...semanticRoute(0.999).cache, namespace: 'strict' } },
    'broken-embeddings': { ...semanticRoute(), cache: { ...semanticRoute().cache, namespace: 'broken', embedding: { provider: 'openai', custom_host: 'http://127.0.0.1:9', model: 'fake-embed' } } },
  },
});

test.before(async () => {
  fake = await startFake(echoUpstream().handler);
  gateway = await startGateway(config());
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const ask = (text: string, options: { route?: string; extra?: Record<string, unknown>; url?: string; trace?: string } = {}) =>
  sdkClient(options.url ?? gateway.url, fake.baseUrl, { 'x-gateway-config': options.route ?? 'semantic', ...(options.trace ? { 'x-gateway-trace-id': options.trace } : {}) })
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...options.extra })
    .withResponse();
const cacheOf = async (answer: ReturnType<typeof ask>) => (await answer).response.headers.get('x-gateway-cache');

test.serial('the fake embedding places the near misses above the default threshold (so the guard, not the threshold, refuses them)', (t) => {
  t.is(Math.round(similarity(BASE, REORDERED) * 1e6) / 1e6, 1);
  for (const nearMiss of [OTHER_NUMBER, NEGATED, SYNONYM]) t.true(similarity(BASE, nearMiss) >= 0.95, `${similarity(BASE, nearMiss)}`);
  t.true(similarity(BASE, SYNONYM) < 0.999);
  t.true(similarity(BASE, UNRELATED) < 0.5);
});

test.serial('a request with the same meaning is a SEMANTIC-HIT; near misses, other meanings and other parameters are not', async (t) => {
  const stored = await ask(BASE);
  t.is(stored.response.headers.get('x-gateway-cache'), 'MISS');
  const trace = traceId('semantic');
  const paraphrase = await ask(REORDERED, { trace });
  t.is(paraphrase.response.headers.get('x-gateway-cache'), 'SEMANTIC-HIT');
  t.deepEqual(paraphrase.data, stored.data);
  const logged = await loggedOnce(gateway, trace);
  t.is(logged.cache?.status, 'SEMANTIC-HIT');
  t.is(logged.cache?.similarity, 1);
  t.true((logged.cache?.savedUsd ?? 0) > 0);

  t.is(await cacheOf(ask(SYNONYM)), 'SEMANTIC-HIT', 'a synonym passes the default threshold');
  t.is(await cacheOf(ask(OTHER_NUMBER)), 'MISS', 'another number is another question');
  t.is(await cacheOf(ask(NEGATED)), 'MISS', 'a negation is another question');
  t.is(await cacheOf(ask(UNRELATED)), 'MISS');
  t.is(await cacheOf(ask(REORDERED, { extra: { temperature: 0.2 } })), 'MISS', 'other parameters are another partition');
  t.is(await cacheOf(ask(REORDERED, { extra: { model: 'gpt-4o' } })), 'MISS', 'another model is another partition');
  t.is(await cacheOf(ask(REORDERED, { extra: { messages: [{ role: 'user', name: 'someone', content: REORDERED }] } })), 'MISS', 'a message’s name must match too');
  // Each miss was stored and is now an exact hit.
  t.is(await cacheOf(ask(OTHER_NUMBER)), 'HIT');
  t.is(await cacheOf(ask(NEGATED)), 'HIT');
  const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
  t.regex(metrics, /gateway_cache_hits_total\{operation="chat",kind="semantic"\} 2/);
});

test.serial('a streamed request can be a semantic hit of a plain answer', async (t) => {
  const question = 'Explain how a refrigerator moves heat from inside the box out into the room, in plain words for a curious child.';
  const stored = await ask(question);
  t.is(stored.response.headers.get('x-gateway-cache'), 'MISS');
  const { data: stream, response } = await sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-config': 'semantic' })
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'In plain words for a curious child: explain how a refrigerator moves heat from inside the box out into the room.' }], stream: true })
    .withResponse();
  t.is(response.headers.get('x-gateway-cache'), 'SEMANTIC-HIT');
  let content = '';
  for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
  t.is<string | null, string | null>(content, stored.data.choices[0].message.content);
});

test.serial('a higher threshold refuses what the default accepts', async (t) => {
  await ask(BASE, { route: 'strict' });
  t.is(await cacheOf(ask(REORDERED, { route: 'strict' })), 'SEMANTIC-HIT');
  t.is(await cacheOf(ask(SYNONYM, { route: 'strict' })), 'MISS');
});

test.serial('when the embeddings target fails, the request goes on as an exact lookup (MISS, then HIT)', async (t) => {
  t.is(await cacheOf(ask(BASE, { route: 'broken-embeddings' })), 'MISS');
  t.is(await cacheOf(ask(REORDERED, { route: 'broken-embeddings' })), 'MISS');
  t.is(await cacheOf(ask(BASE, { route: 'broken-embeddings' })), 'HIT');
});

test.serial('the embedded semantic index survives a restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-semantic-restart-'));
  const before = await startGateway(config(), { GATEWAY_DATA_DIR: dataDir });
  t.is(await cacheOf(ask(`${BASE} Again.`, { url: before.url })), 'MISS');
  await before.close();
  const after = await startGateway(config(), { GATEWAY_DATA_DIR: dataDir });
  try {
    t.is(await cacheOf(ask(`again: ${REORDERED}`, { url: after.url })), 'SEMANTIC-HIT');
  } finally {
    await after.close();
  }
});
