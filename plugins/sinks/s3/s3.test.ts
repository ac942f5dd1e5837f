import { gunzipSync } from 'node:zlib';
import test from 'ava';
import { drive, fastProvider, sinkCounters, sinkGateway, waitFor } from '../../../test/logs/sink-harness.js';
import { s3Fake } from './s3-fake.js';
import { s3 } from './index.js';

const ACCESS_KEY = 'AKIAFAKEACCESSKEY01';
const SECRET = 'fake-secret-access-key-0123456789abcdef';

test('S3: one gzipped JSON-lines object per batch through the AWS SDK, every record once, through an outage', async (t) => {
  t.timeout(60_000);
  const fake = await s3Fake('logs-bucket', ACCESS_KEY);
  const provider = await fastProvider();
  const gateway = await sinkGateway(
    s3({ bucket: 'logs-bucket', prefix: 'gw/', endpoint: fake.url, region: 'eu-west-1', accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, batchSize: 25, retryMs: 50 }),
  );
  const records = () => [...fake.objects.values()].flatMap((object) => gunzipSync(object.body).toString('utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string }));
  try {
    await drive(gateway.url, provider.url, 150, 4, { 50: () => void (fake.failing = true), 100: () => void (fake.failing = false) });
    t.true(await waitFor(async () => new Set(records().map((record) => record.id)).size >= 150, 30_000));
    const ids = records().map((record) => record.id);
    t.is(new Set(ids).size, 150);
    t.deepEqual([...new Set(ids)].sort(), [...gateway.written].sort());
    for (const [key, object] of fake.objects) {
      t.regex(key, /^gw\/\d{4}\/\d{2}\/\d{2}\/\d{2}\/.+-\d+\.jsonl\.gz$/);
      t.is(object.contentType, 'application/x-ndjson');
      t.is(object.contentEncoding, 'gzip');
      t.true(gunzipSync(object.body).toString('utf8').trim().split('\n').length <= 25, 'one batch per object');
    }
    const counters = sinkCounters(await gateway.gateway.metrics.render(), 's3');
    t.true(counters.spilled > 0);
    t.is(counters.dropped, 0);
    t.false(gateway.otherLines.join('').includes(SECRET));
  } finally {
    await gateway.close();
    provider.close();
    fake.close();
  }
});
