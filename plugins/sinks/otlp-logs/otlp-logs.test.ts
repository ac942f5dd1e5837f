import test from 'ava';
import { drive, fastProvider, sinkGateway, waitFor } from '../../../test/logs/sink-harness.js';
import { otlpFake } from './otlp-logs-fake.js';
import { otlpLogs } from './index.js';

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
