import test from 'ava';
import { drive, fastProvider, sinkGateway, waitFor } from '../../../test/logs/sink-harness.js';
import { otlpFake } from './otlp-logs-fake.js';
import { otlpLogRecord, otlpLogs } from './index.js';

const attribute = (record: Record<string, any>, key: string) => record.attributes.find((item: { key: string }) => item.key === key)?.value;

test('OTLP logs: one log record per request with GenAI semantic conventions attributes, in order', async (t) => {
  t.timeout(60_000);
  const fake = await otlpFake();
  const provider = await fastProvider();
  const gateway = await sinkGateway(otlpLogs({ endpoint: fake.url, headers: { authorization: 'Bearer collector-token-abcdef0123' }, serviceName: 'gw-test' }));
  try {
    await drive(gateway.url, provider.url, 40, 4, {});
    t.true(await waitFor(async () => fake.logRecords.length >= 40, 30_000));
    t.deepEqual(
      fake.logRecords.map((record) => attribute(record, 'log.record.uid').stringValue),
      gateway.written,
    );
    const record = fake.logRecords[0];
    t.is(record.severityNumber, 9);
    t.is(record.severityText, 'INFO');
    t.is(record.eventName, 'gen_ai.client.inference.operation.details');
    t.regex(record.timeUnixNano, /^\d{19}$/);
    t.deepEqual(attribute(record, 'gen_ai.operation.name'), { stringValue: 'chat' });
    t.deepEqual(attribute(record, 'gen_ai.provider.name'), { stringValue: 'openai' });
    t.deepEqual(attribute(record, 'gen_ai.response.model'), { stringValue: 'fast' });
    t.deepEqual(attribute(record, 'gen_ai.usage.input_tokens'), { intValue: '1' });
    t.deepEqual(attribute(record, 'gen_ai.usage.output_tokens'), { intValue: '1' });
    t.deepEqual(attribute(record, 'http.response.status_code'), { intValue: '200' });
    t.is(attribute(record, 'error.type'), undefined);
    t.is(JSON.parse(record.body.stringValue).id, gateway.written[0]);
    t.deepEqual(fake.resources[0].attributes, [{ key: 'service.name', value: { stringValue: 'gw-test' } }]);
    t.is(fake.headers[0].authorization, 'Bearer collector-token-abcdef0123');
    t.false(gateway.otherLines.join('').includes('collector-token-abcdef0123'));
  } finally {
    await gateway.close();
    provider.close();
    fake.close();
  }
});

test('OTLP logs: a failed request is an ERROR record with error.type; a gateway trace id of 32 hex digits becomes the record trace id', (t) => {
  const base = { id: 'id-1', time: '2026-11-29T00:00:00.000Z', trace_id: '0123456789abcdef0123456789abcdef', caller_type: null, key_id: null, key_name: null, end_user: null, provider: 'openai', model: 'gpt-x', operation: 'embed', method: 'POST', path: '/v1/embeddings', streaming: false, latency_ms: 3, gateway_ms: 1, upstream_ms: 2, ttft_ms: null, prompt_tokens: null, completion_tokens: null, cached_tokens: null, reasoning_tokens: null, total_tokens: null, cost_usd: null, cache_status: null, metadata: {}, request_body: null, response_body: null };
  const record = otlpLogRecord({ ...base, status: 502, outcome: 'error', error_type: 'api_error', error_code: 'upstream_error', error_message: 'x' }, 1n);
  t.is(record.severityNumber, 17);
  t.is(record.traceId, '0123456789abcdef0123456789abcdef');
  t.is(record.timeUnixNano, '1795910400000000000');
  const attributes = record.attributes as Array<{ key: string; value: unknown }>;
  t.deepEqual(attributes.find((item) => item.key === 'error.type')?.value, { stringValue: 'upstream_error' });
  t.deepEqual(attributes.find((item) => item.key === 'gen_ai.operation.name')?.value, { stringValue: 'embeddings' });
  t.is(otlpLogRecord({ ...base, trace_id: 'client-chosen', status: 404, outcome: 'error', error_type: 'invalid_request_error', error_code: 'model_not_found', error_message: 'x' }, 1n).severityNumber, 13);
});
