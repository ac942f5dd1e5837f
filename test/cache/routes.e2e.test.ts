import test from 'ava';
import OpenAI from 'openai';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, loggedOnce, PROVIDER_KEY, sdkClient, startGateway, type TestGateway, traceId } from '../harness.js';
import { echoUpstream } from './cache-harness.js';

// The cache on routed requests (issue 31): a conditional route's chosen target is part of the key,
// so that in a shared namespace one caller's metadata never decides which model's answer another
// caller is served; a hit answers with the route headers a miss has; an only-if-cached miss is
// logged as a miss.
let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(echoUpstream().handler);
  const target = (name: string, model: string) => ({ name, provider: 'openai', custom_host: fake.baseUrl, override_params: { model } });
  gateway = await startGateway({
    routes: {
      tiers: {
        strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': 'gold' }, then: 'large' }], default: 'small' },
        cache: { mode: 'simple', namespace: 'tiers' },
        targets: [target('large', 'model-large'), target('small', 'model-small')],
      },
      both: {
        strategy: { mode: 'fallback' },
        cache: { mode: 'simple', namespace: 'both' },
        targets: [target('first', 'model-first'), target('second', 'model-second')],
      },
    },
  });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

/** The account key taking a route (its targets take the caller's Bearer token), with `headers`. */
const routed = (route: string, headers: Record<string, string> = {}) =>
  new OpenAI({ apiKey: PROVIDER_KEY, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-config': route, ...headers } });
const ask = (client: OpenAI, text: string) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }).withResponse();
const upstreamModels = (text: string) => fake.requests.filter((request) => request.json().messages?.at(-1)?.content === text).map((request) => request.json().model);

test('a conditional route keys its answers by the target it chose: a gold caller’s answer is never served to a default caller', async (t) => {
  const gold = routed('tiers', { 'x-gateway-metadata': JSON.stringify({ tier: 'gold' }) });
  const plain = routed('tiers', { 'x-gateway-metadata': JSON.stringify({ tier: 'free' }) });
  const large = await ask(gold, 'which model?');
  t.is(large.response.headers.get('x-gateway-cache'), 'MISS');
  t.is(large.data.model, 'model-large');
  const small = await ask(plain, 'which model?');
  t.is(small.response.headers.get('x-gateway-cache'), 'MISS', 'another target: another answer');
  t.is(small.data.model, 'model-small');
  t.deepEqual(upstreamModels('which model?'), ['model-large', 'model-small']);
  // Each choice still hits its own answer, whoever asks.
  const goldAgain = await ask(routed('tiers', { 'x-gateway-metadata': JSON.stringify({ tier: 'gold', team: 'other' }) }), 'which model?');
  t.is(goldAgain.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(goldAgain.data.model, 'model-large');
  const plainAgain = await ask(routed('tiers'), 'which model?');
  t.is(plainAgain.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(plainAgain.data.model, 'model-small');
  t.is(upstreamModels('which model?').length, 2);
});

test('a hit carries the route headers a miss does: no attempt, and the target whose answer it is', async (t) => {
  const miss = await ask(routed('both'), 'route headers');
  t.is(miss.response.headers.get('x-gateway-cache'), 'MISS');
  t.is(miss.response.headers.get('x-gateway-attempts'), '1');
  t.is(miss.response.headers.get('x-gateway-route-target'), 'first');
  const hit = await ask(routed('both'), 'route headers');
  t.is(hit.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(hit.response.headers.get('x-gateway-attempts'), '0');
  t.is(hit.response.headers.get('x-gateway-route-target'), 'first');

  // A streamed miss is stored with its target too.
  const stream = await routed('tiers', { 'x-gateway-metadata': JSON.stringify({ tier: 'gold' }) })
    .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'streamed route headers' }], stream: true })
    .withResponse();
  for await (const chunk of stream.data) t.truthy(chunk);
  t.is(stream.response.headers.get('x-gateway-route-target'), 'large');
  const streamHit = await ask(routed('tiers', { 'x-gateway-metadata': JSON.stringify({ tier: 'gold' }) }), 'streamed route headers');
  t.is(streamHit.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(streamHit.response.headers.get('x-gateway-attempts'), '0');
  t.is(streamHit.response.headers.get('x-gateway-route-target'), 'large');
});

test('an only-if-cached miss is a 504 logged with cache_status MISS, where the cache applies and where it is off', async (t) => {
  const trace = traceId('only-if-cached');
  const error = await ask(routed('both', { 'x-gateway-cache': 'only-if-cached', 'x-gateway-trace-id': trace }), 'never stored').catch((caught) => caught);
  t.is(error.status, 504);
  t.is(error.error.code, 'cache_miss');
  t.is(error.headers.get('x-gateway-cache'), 'MISS');
  t.deepEqual(upstreamModels('never stored'), []);
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.status, 504);
  t.deepEqual(entry.cache, { status: 'MISS' });
  await gateway.gateway.flushLogs();
  t.is((await gateway.gateway.logStore.list({ limit: 5, traceId: trace })).data[0].cache_status, 'MISS');

  // No cache setting on the plain path: the 504 is a miss all the same.
  const offTrace = traceId('only-if-cached-off');
  const off = await ask(sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-cache': 'only-if-cached', 'x-gateway-trace-id': offTrace }), 'never stored').catch((caught) => caught);
  t.is(off.status, 504);
  t.deepEqual((await loggedOnce(gateway, offTrace)).cache, { status: 'MISS' });
  await gateway.gateway.flushLogs();
  t.is((await gateway.gateway.logStore.list({ limit: 5, traceId: offTrace })).data[0].cache_status, 'MISS');
});
