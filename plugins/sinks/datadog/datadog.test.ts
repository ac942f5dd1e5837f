import test from 'ava';
import { drive, fastProvider, firstOccurrences, sinkCounters, sinkGateway, waitFor } from '../../../test/logs/sink-harness.js';
import { datadogFake } from './datadog-fake.js';
import { datadog } from './index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';

const API_KEY = 'dd-secret-api-key-0123456789abcdef';

test('Datadog logs: every request once, gzip, in order, through an intake outage spilled and replayed; the key never logged', async (t) => {
  t.timeout(120_000);
  const fake = await datadogFake(API_KEY);
  const provider = await fastProvider();
  const gateway = await sinkGateway(datadog({ url: fake.url, apiKey: API_KEY, tags: 'env:test', service: 'gw', retryMs: 50 }));
  try {
    await drive(gateway.url, provider.url, 300, 8, {
      100: () => void (fake.failing = true),
      200: () => void (fake.failing = false),
    });
    t.true(await waitFor(async () => new Set(fake.logs.map((log) => log.gateway.id)).size >= 300, 30_000));
    const { order, repeats } = firstOccurrences(fake.logs.map((log) => log.gateway.id as string));
    t.deepEqual(order, gateway.written);
    t.is(repeats, 0, 'a refused request stored nothing, so nothing came twice');
    t.true(fake.requests.every((request) => request.gzip && request.count <= 1000));
    const log = fake.logs[0];
    t.is(log.service, 'gw');
    t.is(log.ddsource, 'llm-gateway');
    t.is(log.ddtags, 'env:test');
    t.is(log.status, 'info');
    t.is(log.http.status_code, 200);
    t.is(log.message, 'POST /v1/chat/completions 200 fast');
    t.is(log.gateway.prompt_tokens, 1);
    t.is(log.gateway.request_body, null, 'no bodies unless asked');
    const counters = sinkCounters(await gateway.gateway.metrics.render(), 'datadog');
    t.true(counters.spilled > 0);
    t.is(counters.replayed, counters.spilled);
    t.is(counters.dropped, 0);
    t.true(gateway.otherLines.some((line) => line.includes('(datadog) failed; entries spill')), 'the outage is logged');
    t.false(gateway.otherLines.join('').includes(API_KEY));
  } finally {
    await gateway.close();
    provider.close();
    fake.close();
  }
});

test('Datadog logs: a batch over the intake caps is split (1000 logs, 5 MB)', async (t) => {
  const fake = await datadogFake(API_KEY);
  const provider = await fastProvider();
  const gateway = await sinkGateway(datadog({ url: fake.url, apiKey: API_KEY, batchSize: 2500, bodies: true }));
  try {
    await drive(gateway.url, provider.url, 1200, 16, {});
    t.true(await waitFor(async () => fake.logs.length >= 1200, 30_000));
    t.true(fake.requests.every((request) => request.count <= 1000));
    t.truthy(fake.logs[0].gateway.request_body, 'bodies when asked');
  } finally {
    await gateway.close();
    provider.close();
    fake.close();
  }
});

test('Datadog logs: the key from a stored credential, read per delivery (a rotation applies at once); a record of a failed request is an error log', async (t) => {
  const fake = await datadogFake(API_KEY);
  let stored = 'an-old-key-that-the-intake-refuses';
  const sink = datadog({ url: fake.url, credential: 'cred_dd' }).create(
    pluginDependencies({ credential: async (id) => (id === 'cred_dd' ? { apiKey: stored } : Promise.reject(new Error('unknown'))) }),
  );
  const record = { ...sampleRecord, status: 502, outcome: 'error', error_type: 'api_error', error_code: 'upstream_error', error_message: 'bad gateway' };
  try {
    const refused = await t.throwsAsync(sink.deliver([record]));
    t.is(refused?.message, 'datadog: answered HTTP 403');
    t.false(refused?.message.includes(stored));
    stored = API_KEY;
    await sink.deliver([record]);
    t.is(fake.logs.length, 1);
    t.like(fake.logs[0], { status: 'error', error: { kind: 'upstream_error', message: 'bad gateway' }, http: { status_code: 502 } });
  } finally {
    fake.close();
  }
});

const sampleRecord = {
  id: '0190c0de-0000-7000-8000-000000000001',
  time: '2026-11-29T00:00:00.000Z',
  trace_id: 'trace-1',
  caller_type: 'account',
  key_id: null,
  key_name: null,
  end_user: 'user-7',
  provider: 'openai',
  model: 'gpt-x',
  operation: 'chat',
  method: 'POST',
  path: '/v1/chat/completions',
  status: 200,
  outcome: 'ok',
  error_type: null,
  error_code: null,
  error_message: null,
  streaming: false,
  latency_ms: 12.5,
  gateway_ms: 1.5,
  upstream_ms: 11,
  ttft_ms: null,
  prompt_tokens: 3,
  completion_tokens: 4,
  cached_tokens: null,
  reasoning_tokens: null,
  total_tokens: 7,
  cost_usd: 0.0001,
  cache_status: null,
  metadata: {},
  request_body: null,
  response_body: null,
};
