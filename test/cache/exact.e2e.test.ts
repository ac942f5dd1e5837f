import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, gatewayHeaders, loggedOnce, PROVIDER_KEY, sdkClient, startGateway, type TestGateway, traceId } from '../harness.js';
import { ECHO_USAGE, echoUpstream, sseEvents } from './cache-harness.js';

// The exact cache through the official SDK, configured by the config's default (every request of
// the account key): plain and streamed answers hit each other both ways round, the stream rules
// hold on a replayed stream, and the per-request controls and the headers behave as documented.
let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(echoUpstream().handler);
  gateway = await startGateway({ cache: { default: { mode: 'simple', max_age: 600 } } });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const client = (headers: Record<string, string> = {}) => sdkClient(gateway.url, fake.baseUrl, headers);
/** Upstream chat requests whose last message is `text`. */
const upstreamCalls = (text: string) => fake.requests.filter((request) => request.url.startsWith('/v1/chat') && request.json().messages?.at(-1)?.content === text).length;
const ask = (text: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  client(headers)
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...extra })
    .withResponse();

async function askStream(text: string, extra: Record<string, unknown> = {}) {
  const { data: stream, response } = await client()
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], stream: true, ...extra })
    .withResponse();
  let content = '';
  const chunks = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    content += chunk.choices[0]?.delta?.content ?? '';
  }
  return { content, chunks, response };
}

/** The raw SSE text of a streamed chat request (to check the wire, not the SDK's reading of it). */
async function rawStream(text: string, includeUsage: boolean) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...gatewayHeaders(fake.baseUrl), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) }),
  });
  return { response, events: sseEvents(await response.text()) };
}

test('a plain miss, then a plain hit: the same answer, the upstream asked once, HIT with Age', async (t) => {
  const first = await ask('plain then plain');
  t.is(first.response.headers.get('x-gateway-cache'), 'MISS');
  t.is(first.response.headers.get('age'), null);
  const second = await ask('plain then plain');
  t.is(second.response.headers.get('x-gateway-cache'), 'HIT');
  t.regex(second.response.headers.get('age') ?? '', /^\d+$/);
  t.deepEqual(second.data, first.data);
  t.regex(second.data.choices[0].message.content ?? '', /^Answer \d+ to: plain then plain$/);
  t.is(upstreamCalls('plain then plain'), 1);
});

test('a plain miss, then a streamed hit: SSE chunks, usage null on each, the usage chunk when asked for, [DONE]', async (t) => {
  const plain = await ask('plain then streamed');
  const withUsage = await rawStream('plain then streamed', true);
  t.is(withUsage.response.headers.get('x-gateway-cache'), 'HIT');
  t.regex(withUsage.response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = withUsage.events;
  t.is(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1) as Array<Record<string, any>>;
  const usageChunk = chunks.at(-1)!;
  t.deepEqual(usageChunk.choices, []);
  t.deepEqual(usageChunk.usage, ECHO_USAGE);
  for (const chunk of chunks.slice(0, -1)) {
    t.is(chunk.object, 'chat.completion.chunk');
    t.is(chunk.usage, null);
  }
  t.is<string | null, string | null>(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join(''), plain.data.choices[0].message.content);
  t.is(chunks.at(-2)!.choices[0].finish_reason, 'stop');

  const withoutUsage = await rawStream('plain then streamed', false);
  const plainChunks = withoutUsage.events.slice(0, -1) as Array<Record<string, any>>;
  t.is(withoutUsage.events.at(-1), '[DONE]');
  t.true(plainChunks.every((chunk) => chunk.usage === null && chunk.choices.length > 0), 'no usage chunk when it was not asked for');

  // The SDK reads the replayed stream like any other.
  const sdk = await askStream('plain then streamed', { stream_options: { include_usage: true } });
  t.is(sdk.response.headers.get('x-gateway-cache'), 'HIT');
  t.is<string | null, string | null>(sdk.content, plain.data.choices[0].message.content);
  t.deepEqual(sdk.chunks.at(-1)!.usage, ECHO_USAGE);
  t.is(upstreamCalls('plain then streamed'), 1);
});

test('a streamed miss, then a streamed hit and a plain hit: the stream is recorded as it flows and stored whole', async (t) => {
  const streamed = await askStream('streamed first', { stream_options: { include_usage: true } });
  t.is(streamed.response.headers.get('x-gateway-cache'), 'MISS');
  t.regex(streamed.content, /^Answer \d+ to: streamed first$/);
  const again = await askStream('streamed first');
  t.is(again.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(again.content, streamed.content);
  t.true(again.chunks.every((chunk) => chunk.usage === null || chunk.usage === undefined), 'no usage chunk when not asked for');
  const plain = await ask('streamed first');
  t.is(plain.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(plain.data.choices[0].message.content, streamed.content);
  t.is(plain.data.choices[0].finish_reason, 'stop');
  t.is(plain.data.object, 'chat.completion');
  t.deepEqual(plain.data.usage, ECHO_USAGE);
  t.is(upstreamCalls('streamed first'), 1);
});

test('the key ignores field order, the stream flag and fields at their default; other values are other answers', async (t) => {
  await ask('normalised');
  const reordered = await client().chat.completions.create({ messages: [{ content: 'normalised', role: 'user' }], model: 'gpt-4o-mini', temperature: 1, n: 1, stream: false }).withResponse();
  t.is(reordered.response.headers.get('x-gateway-cache'), 'HIT');
  const warmer = await ask('normalised', { temperature: 0.2 });
  t.is(warmer.response.headers.get('x-gateway-cache'), 'MISS');
  const otherModel = await ask('normalised', { model: 'gpt-4o' });
  t.is(otherModel.response.headers.get('x-gateway-cache'), 'MISS');
  t.is(upstreamCalls('normalised'), 3);
});

test('x-gateway-cache: no-store bypasses the cache both ways; refresh asks the upstream and stores the new answer', async (t) => {
  const first = await ask('controls');
  const bypass = await ask('controls', {}, { 'x-gateway-cache': 'no-store' });
  t.is(bypass.response.headers.get('x-gateway-cache'), 'BYPASS');
  t.not(bypass.data.choices[0].message.content, first.data.choices[0].message.content);
  t.is((await ask('controls')).data.choices[0].message.content, first.data.choices[0].message.content, 'no-store stored nothing');
  const refreshed = await ask('controls', {}, { 'x-gateway-cache': 'refresh' });
  t.is(refreshed.response.headers.get('x-gateway-cache'), 'REFRESH');
  t.not(refreshed.data.choices[0].message.content, first.data.choices[0].message.content);
  const after = await ask('controls');
  t.is(after.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(after.data.choices[0].message.content, refreshed.data.choices[0].message.content);
  t.is(upstreamCalls('controls'), 3);
});

test('Cache-Control: no-store bypasses, no-cache refreshes', async (t) => {
  await ask('cache-control');
  t.is((await ask('cache-control', {}, { 'cache-control': 'no-store' })).response.headers.get('x-gateway-cache'), 'BYPASS');
  t.is((await ask('cache-control', {}, { 'cache-control': 'max-age=0, no-cache' })).response.headers.get('x-gateway-cache'), 'REFRESH');
  t.is(upstreamCalls('cache-control'), 3);
});

test('only-if-cached: a hit is served, a miss is 504 cache_miss and nothing goes upstream', async (t) => {
  const error = await ask('never asked', {}, { 'x-gateway-cache': 'only-if-cached' }).catch((caught) => caught);
  t.is(error.status, 504);
  t.is(error.error.code, 'cache_miss');
  t.is(error.error.type, 'cache_miss_error');
  t.is(upstreamCalls('never asked'), 0);
  await ask('asked once');
  const hit = await ask('asked once', {}, { 'x-gateway-cache': 'only-if-cached' });
  t.is(hit.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(upstreamCalls('asked once'), 1);
});

test('an unknown x-gateway-cache value is a 400 naming the header', async (t) => {
  const error = await ask('bad control', {}, { 'x-gateway-cache': 'sometimes' }).catch((caught) => caught);
  t.is(error.status, 400);
  t.is(error.error.param, 'x-gateway-cache');
  t.is(error.error.code, 'invalid_header');
});

test('upstream errors and filtered answers are never stored', async (t) => {
  for (let round = 0; round < 2; round++) {
    const error = await ask('please fail-500').catch((caught) => caught);
    t.is(error.status, 500);
    t.is(error.headers.get('x-gateway-cache'), 'MISS');
  }
  t.is(upstreamCalls('please fail-500'), 2);
  const filtered = await ask('filtered answer');
  t.is(filtered.data.choices[0].finish_reason, 'content_filter');
  t.is((await ask('filtered answer')).response.headers.get('x-gateway-cache'), 'MISS');
  await askStream('filtered stream');
  t.is((await askStream('filtered stream')).response.headers.get('x-gateway-cache'), 'MISS');
  t.is(upstreamCalls('filtered stream'), 2);
});

test('text completions and embeddings are cached too', async (t) => {
  const completions = client().completions;
  const first = await completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'complete me' }).withResponse();
  const second = await completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'complete me', stream: false }).withResponse();
  t.is(first.response.headers.get('x-gateway-cache'), 'MISS');
  t.is(second.response.headers.get('x-gateway-cache'), 'HIT');
  t.deepEqual(second.data, first.data);
  const streamed = await completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'complete me', stream: true }).withResponse();
  t.is(streamed.response.headers.get('x-gateway-cache'), 'HIT');
  let text = '';
  for await (const chunk of streamed.data) text += chunk.choices[0]?.text ?? '';
  t.is(text, first.data.choices[0].text);

  const embeddings = client().embeddings;
  const vector = await embeddings.create({ model: 'text-embedding-3-small', input: 'embed me', encoding_format: 'float' }).withResponse();
  const again = await embeddings.create({ model: 'text-embedding-3-small', input: 'embed me', encoding_format: 'float' }).withResponse();
  t.is(vector.response.headers.get('x-gateway-cache'), 'MISS');
  t.is(again.response.headers.get('x-gateway-cache'), 'HIT');
  t.deepEqual(again.data.data, vector.data.data);
  const other = await embeddings.create({ model: 'text-embedding-3-small', input: 'embed me too', encoding_format: 'float' }).withResponse();
  t.is(other.response.headers.get('x-gateway-cache'), 'MISS');
});

test('the log entry records the cache status and, on a hit, the cost saved; /metrics counts hits, misses and savings', async (t) => {
  const missTrace = traceId('cache-log');
  const hitTrace = traceId('cache-log');
  await ask('logged', {}, { 'x-gateway-trace-id': missTrace });
  await ask('logged', {}, { 'x-gateway-trace-id': hitTrace });
  const miss = await loggedOnce(gateway, missTrace);
  const hit = await loggedOnce(gateway, hitTrace);
  t.deepEqual(miss.cache, { status: 'MISS' });
  t.true((miss.costUsd ?? 0) > 0, 'the miss was priced');
  t.is(hit.cache?.status, 'HIT');
  t.is(hit.cache?.savedUsd, miss.costUsd);
  t.is(hit.costUsd, undefined, 'a hit costs nothing');
  t.is(hit.usage, undefined, 'a hit used no tokens');
  t.is(hit.upstreamMs, undefined);
  t.is(hit.model, miss.model);
  await gateway.gateway.flushLogs();
  const stored = (await gateway.gateway.logStore.list({ limit: 5, traceId: hitTrace })).data[0];
  t.is(stored.cache_status, 'HIT');
  t.is(stored.cache_saved_usd, miss.costUsd!);
  const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
  t.regex(metrics, /gateway_cache_hits_total\{operation="chat",kind="exact"\} [1-9]/);
  t.regex(metrics, /gateway_cache_misses_total\{operation="chat"\} [1-9]/);
  t.regex(metrics, /gateway_cache_saved_usd_total\{provider="openai",model="gpt-4o-mini"\} [0-9.e-]+/);
  t.regex(metrics, /gateway_cache_stores_total\{result="stored"\} [1-9]/);
  const usage: any = await (await fetch(`${gateway.url}/admin/usage?range=hour`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).json();
  t.true(usage.cache.hits >= 1);
  t.true(usage.cache.misses >= 1);
  t.true(usage.cache.hit_rate > 0 && usage.cache.hit_rate < 1);
  t.true(usage.cache.saved_usd > 0);
  const sum = (field: string) => usage.series[0].points.reduce((total: number, point: Record<string, number>) => total + point[field], 0);
  t.is(sum('cache_hits'), usage.cache.hits);
  t.is(sum('cache_misses'), usage.cache.misses);
});

test('without a cache setting nothing is cached and no x-gateway-cache is sent; x-gateway-cache: only-if-cached is then always a miss', async (t) => {
  const plain = await startGateway();
  try {
    const uncached = sdkClient(plain.url, fake.baseUrl);
    const { response } = await uncached.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'uncached' }] }).withResponse();
    t.is(response.headers.get('x-gateway-cache'), null);
    await uncached.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'uncached' }] });
    t.is(upstreamCalls('uncached'), 2);
    const error = await sdkClient(plain.url, fake.baseUrl, { 'x-gateway-cache': 'only-if-cached' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'uncached' }] })
      .catch((caught) => caught);
    t.is(error.status, 504);
    // Cache-Control is for whatever cache is on the way: with none here, it changes nothing.
    const ignored = await sdkClient(plain.url, fake.baseUrl, { 'cache-control': 'only-if-cached' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'uncached' }] })
      .withResponse();
    t.is(ignored.response.status, 200);
    t.is(upstreamCalls('uncached'), 3);
  } finally {
    await plain.close();
  }
});

test('the provider credential is no part of the answer: another Bearer token of the same caller hits', async (t) => {
  await ask('credential');
  const other = await sdkClient(gateway.url, fake.baseUrl)
    .withOptions({ apiKey: `${PROVIDER_KEY}-other` })
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'credential' }] })
    .withResponse();
  t.is(other.response.headers.get('x-gateway-cache'), 'HIT');
});
