import test from 'ava';
import { drive, fastProvider, sinkCounters, sinkGateway, waitFor } from '../../../test/logs/sink-harness.js';
import { langfuseFake } from './langfuse-fake.js';
import { langfuse } from './index.js';
import { intakeFake } from '../../shared/intake-fake.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';

const PUBLIC_KEY = 'pk-lf-test';
const SECRET_KEY = 'sk-lf-secret-0123456789abcdef';

test('Langfuse: a trace and a generation per request with input, output, usage; a redelivery is deduplicated by event id', async (t) => {
  t.timeout(60_000);
  const fake = await langfuseFake(PUBLIC_KEY, SECRET_KEY);
  const provider = await fastProvider();
  const gateway = await sinkGateway(langfuse({ baseUrl: fake.url, publicKey: PUBLIC_KEY, secretKey: SECRET_KEY, environment: 'test', retryMs: 50 }));
  try {
    await drive(gateway.url, provider.url, 60, 4, { 20: () => void (fake.failing = true), 40: () => void (fake.failing = false) });
    t.true(await waitFor(async () => fake.generations.size >= 60, 30_000));
    t.is(fake.generations.size, 60);
    t.deepEqual([...fake.generations.keys()].sort(), [...gateway.written].sort());
    const generation = fake.generations.get(gateway.written[0])!;
    t.is(generation.model, 'fast');
    t.is(generation.name, 'chat');
    t.is(generation.level, 'DEFAULT');
    t.is(generation.environment, 'test');
    t.deepEqual(generation.usageDetails, { input: 1, output: 1, total: 2 });
    t.deepEqual(generation.input.messages, [{ role: 'user', content: 'hi' }], 'bodies by default: the request as input');
    t.is(generation.output.choices[0].message.content, 'ok');
    const trace = fake.traces.get(generation.traceId)!;
    t.truthy(trace);
    t.is(trace.name, 'POST /v1/chat/completions');
    t.true(fake.received >= 120);
    const counters = sinkCounters(await gateway.gateway.metrics.render(), 'langfuse');
    t.true(counters.spilled > 0);
    t.is(counters.dropped, 0);
    t.false(gateway.otherLines.join('').includes(SECRET_KEY));
  } finally {
    await gateway.close();
    provider.close();
    fake.close();
  }
});

test('Langfuse: an event refused with a 4xx is logged and not retried; a 5xx among the errors fails the batch', async (t) => {
  const answers: Array<{ status: number; body: unknown }> = [];
  const server = await intakeFake(() => answers.shift() ?? { status: 207, body: { successes: [], errors: [] } });
  const warnings: object[] = [];
  const sink = langfuse({ baseUrl: server.url, publicKey: PUBLIC_KEY, secretKey: SECRET_KEY }).create(
    pluginDependencies({ logger: { info() {}, debug() {}, error() {}, warn: (object) => void warnings.push(object) } }),
  );
  const record = { id: 'r1', time: '2026-11-29T00:00:00.000Z', trace_id: 't1', caller_type: null, key_id: null, key_name: null, end_user: null, provider: 'openai', model: 'm', operation: 'chat', method: 'POST', path: '/v1/chat/completions', status: 200, outcome: 'ok', error_type: null, error_code: null, error_message: null, streaming: false, latency_ms: 1, gateway_ms: 1, upstream_ms: null, ttft_ms: null, prompt_tokens: null, completion_tokens: null, cached_tokens: null, reasoning_tokens: null, total_tokens: null, cost_usd: null, cache_status: null, metadata: {}, request_body: null, response_body: null };
  try {
    answers.push({ status: 207, body: { successes: [{ id: 'r1-trace', status: 201 }], errors: [{ id: 'r1-generation', status: 400, message: 'invalid' }] } });
    await sink.deliver([record]);
    t.deepEqual(warnings, [{ sink: 'langfuse', refused: 1 }]);
    answers.push({ status: 207, body: { successes: [], errors: [{ id: 'r1-trace', status: 500, message: 'internal' }] } });
    await t.throwsAsync(sink.deliver([record]), { message: /refused 1 events \(status 500\)/ });
  } finally {
    server.close();
  }
});
