import test from 'ava';
import OpenAI from 'openai';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { loggedOnce, PROVIDER_KEY, sdkClient, startGateway, type TestGateway, traceId } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { bagOfWords, ECHO_COST_USD, echoUpstream } from './cache-harness.js';

// Issue 31, item 8: a semantic lookup's embedding is the caller's (its log entry's cost, its key's
// budget), on hits, misses and only-if-cached misses alike; the text embedded is capped
// (cache.semanticMaxChars); near misses that change a name or swap a word for its opposite are
// refused although their similarity passes the threshold.
let fake: Fake;
let gateway: TestGateway;

/** The fake's embeddings answer reports 8 prompt tokens; priced at $1,000 per million: $0.008 a lookup. */
const EMBED_TOKENS = 8;
const EMBED_USD = 0.008;
const MAX_CHARS = 400;

const semantic = () => ({ mode: 'semantic' as const, embedding: { provider: 'openai', custom_host: fake.baseUrl, model: 'fake-embed' } });

test.before(async () => {
  fake = await startFake(echoUpstream().handler);
  gateway = await startGateway({
    pricing: { models: { openai: { 'fake-embed': { input: 1000, output: 0 } } } },
    cache: { semanticMaxChars: MAX_CHARS },
    routes: { semantic: { strategy: { mode: 'single' }, cache: semantic(), targets: [{ provider: 'openai', custom_host: fake.baseUrl }] } },
  });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const ask = (text: string, headers: Record<string, string> = {}) =>
  sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-config': 'semantic', ...headers })
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] })
    .withResponse();
const embeddingCalls = () => fake.requests.filter((request) => request.url.startsWith('/v1/embeddings')).length;
const near = (left: number, right: number) => Math.abs(left - right) < 1e-12;

test.serial('the account key: each lookup’s embedding is on the log entry and in its cost, on a miss, a semantic hit and an only-if-cached miss', async (t) => {
  const missTrace = traceId('embed-charge');
  await ask('Which three rivers flow through the old town, and where do they meet?', { 'x-gateway-trace-id': missTrace });
  const miss = await loggedOnce(gateway, missTrace);
  t.is(miss.cache?.status, 'MISS');
  t.is(miss.cache?.embeddingTokens, EMBED_TOKENS);
  t.true(near(miss.cache?.embeddingUsd ?? 0, EMBED_USD));
  t.true(near(miss.costUsd ?? 0, ECHO_COST_USD + EMBED_USD), `${miss.costUsd}`);

  const hitTrace = traceId('embed-charge');
  const hit = await ask('where do they meet, and which three rivers flow through the old town?', { 'x-gateway-trace-id': hitTrace });
  t.is(hit.response.headers.get('x-gateway-cache'), 'SEMANTIC-HIT');
  const hitEntry = await loggedOnce(gateway, hitTrace);
  t.true(near(hitEntry.costUsd ?? 0, EMBED_USD), 'a semantic hit costs its embedding, not the answer');
  t.is(hitEntry.usage, undefined);

  const before = embeddingCalls();
  const onlyTrace = traceId('embed-charge');
  const refused = await ask('A question nobody asked before about the harbour lights', { 'x-gateway-cache': 'only-if-cached', 'x-gateway-trace-id': onlyTrace }).catch((error) => error);
  t.is(refused.status, 504);
  t.is(embeddingCalls(), before + 1, 'the lookup embedded the text');
  const onlyEntry = await loggedOnce(gateway, onlyTrace);
  t.is(onlyEntry.cache?.status, 'MISS');
  t.true(near(onlyEntry.costUsd ?? 0, EMBED_USD), 'an only-if-cached miss costs its embedding');
  await gateway.gateway.flushLogs();
  const stored = (await gateway.gateway.logStore.list({ limit: 5, traceId: onlyTrace })).data[0];
  t.true(near(stored.cost_usd ?? 0, EMBED_USD));
});

test.serial('a virtual key’s budget is charged for its lookups’ embeddings, and refuses once they spent it', async (t) => {
  const credential = (await admin(gateway, 'POST', '/admin/credentials', { name: 'embed credential', provider: 'openai', api_key: PROVIDER_KEY })).json.id as string;
  const route = await admin(gateway, 'POST', '/admin/routes', {
    name: 'semantic-stored',
    route: {
      strategy: { mode: 'single' },
      cache: { mode: 'semantic', embedding: { provider: 'openai', credential, custom_host: fake.baseUrl, model: 'fake-embed' } },
      targets: [{ provider: 'openai', credential, custom_host: fake.baseUrl }],
    },
  });
  t.is(route.status, 201, route.text);
  const { id, key } = await createKey(t, gateway, { name: 'embedding budget', route: 'semantic-stored', limits: { budget_usd: 0.02 } });
  const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-cache': 'only-if-cached' } });
  const lookup = (text: string) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], max_tokens: 1 }).catch((error) => error);
  for (const text of ['first lookup of the day', 'second lookup of the day']) t.is((await lookup(text)).status, 504);
  const spent = await settledUsage(id, 2 * EMBED_USD);
  t.true(near(spent.spend_usd.total, 2 * EMBED_USD), `${JSON.stringify(spent.spend_usd)}`);
  t.is((await lookup('third lookup of the day')).status, 504, '0.016 spent: a third lookup is admitted');
  t.true(near((await settledUsage(id, 3 * EMBED_USD)).spend_usd.total, 3 * EMBED_USD));
  const refused = await lookup('fourth lookup of the day');
  t.is(refused.status, 403);
  t.is(refused.error.code, 'budget_exceeded', 'three lookups (0.024) spent the 0.02 budget');
});

/** The key's usage once its spend reached `expected` and no reservation is left in flight (the settle runs after the answer is sent), or after 3 s. */
async function settledUsage(id: string, expected: number): Promise<{ spend_usd: { total: number }; reserved_usd: number }> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
    if ((usage.reserved_usd === 0 && usage.spend_usd.total >= expected - 1e-12) || Date.now() > deadline) return usage;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test.serial('a text over cache.semanticMaxChars is looked up exactly only: nothing embedded, nothing charged', async (t) => {
  const long = `Describe the harbour at dawn. ${'The boats come in one by one and the gulls follow them. '.repeat(8)}`;
  t.true(long.length > MAX_CHARS);
  const before = embeddingCalls();
  const trace = traceId('embed-cap');
  const first = await ask(long, { 'x-gateway-trace-id': trace });
  t.is(first.response.headers.get('x-gateway-cache'), 'MISS');
  t.is(embeddingCalls(), before, 'not embedded');
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.cache?.embeddingTokens, undefined);
  t.true(near(entry.costUsd ?? 0, ECHO_COST_USD));
  t.is((await ask(long.toUpperCase())).response.headers.get('x-gateway-cache'), 'MISS', 'no semantic lookup');
  t.is((await ask(long)).response.headers.get('x-gateway-cache'), 'HIT', 'the exact lookup still serves it');
  t.is(embeddingCalls(), before);
});

/** The cosine similarity of two texts under the fake's embedding. */
function similarity(left: string, right: string): number {
  const a = bagOfWords(left);
  const b = bagOfWords(right);
  const dot = a.reduce((sum, value, index) => sum + value * b[index], 0);
  return dot / Math.sqrt(a.reduce((sum, value) => sum + value * value, 0) * b.reduce((sum, value) => sum + value * value, 0));
}

test.serial('near misses that change a name or swap a word for its opposite are refused, although similar enough', async (t) => {
  const CONTEXT = 'The ledger for the spring quarter lists the payments, the refunds, the transfers between the branch accounts and the fees charged by the clearing house for each of them.';
  const pairs: Array<[string, string]> = [
    [`${CONTEXT} According to the ledger, how much does Alice still owe the branch?`, `${CONTEXT} According to the ledger, how much does Mallory still owe the branch?`],
    [`${CONTEXT} Is the claim that every refund was approved true?`, `${CONTEXT} Is the claim that every refund was approved false?`],
  ];
  for (const [stored, nearMiss] of pairs) {
    t.true(similarity(stored, nearMiss) >= 0.95, `the fake places them above the default threshold: ${similarity(stored, nearMiss)}`);
    t.is((await ask(stored)).response.headers.get('x-gateway-cache'), 'MISS');
    t.is((await ask(nearMiss)).response.headers.get('x-gateway-cache'), 'MISS', nearMiss);
    // The same words in another order still hit.
    const reordered = `${nearMiss.slice(CONTEXT.length + 1)} ${CONTEXT}`;
    t.is((await ask(reordered)).response.headers.get('x-gateway-cache'), 'SEMANTIC-HIT');
  }
});
