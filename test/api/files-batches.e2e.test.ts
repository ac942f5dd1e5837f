import test from 'ava';
import { toFile } from 'openai';
import { openAIFixture } from '../fakes/openai-fake.js';
import { loggedOnce, PROVIDER_KEY } from '../harness.js';
import { type ApiSetup, startApi } from './api-setup.js';

let api: ApiSetup;

test.before(async () => {
  api = await startApi();
});

test.after.always(async () => {
  await api?.close();
});

const jsonl = Buffer.from(
  [
    { custom_id: 'r1', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } },
    { custom_id: 'r2', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'bye' }] } },
  ]
    .map((line) => JSON.stringify(line))
    .join('\n'),
);

test('files.create passes through: the multipart upload reaches the provider with the file intact, and is logged', async (t) => {
  const { client, trace } = api.client('files-create');
  const file = await client.files.create({ file: await toFile(jsonl, 'batch-input.jsonl'), purpose: 'batch' });
  t.deepEqual(file, JSON.parse(openAIFixture('file.json')));
  const received = api.received(trace);
  t.is(received.method, 'POST');
  t.is(received.url, '/v1/files');
  t.regex(String(received.headers['content-type']), /^multipart\/form-data; boundary=/);
  t.is(received.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  t.true(received.body.includes(jsonl), 'the file bytes are in the upload unchanged');
  t.true(received.body.includes(Buffer.from('name="purpose"\r\n\r\nbatch')));
  const entry = await loggedOnce(api.gateway, trace);
  t.like(entry, { operation: 'passthrough', method: 'POST', path: '/v1/files', status: 200, outcome: 'ok' });
});

test('files.list passes through', async (t) => {
  const { client, trace } = api.client('files-list');
  const page = await client.files.list({ purpose: 'batch', limit: 5 });
  t.deepEqual(page.data, [JSON.parse(openAIFixture('file.json'))]);
  t.is(api.received(trace).url, '/v1/files?purpose=batch&limit=5');
  t.like(await loggedOnce(api.gateway, trace), { operation: 'passthrough', method: 'GET', status: 200 });
});

test('batches.create and batches.retrieve pass through with the JSON as sent', async (t) => {
  const created = api.client('batch-create');
  const params = { input_file_id: 'file-abc123', endpoint: '/v1/chat/completions' as const, completion_window: '24h' as const, metadata: { customer_id: 'user_123456789' } };
  const batch = await created.client.batches.create(params);
  t.deepEqual(api.received(created.trace).json(), params);
  t.deepEqual(batch, JSON.parse(openAIFixture('batch.json')));
  t.like(await loggedOnce(api.gateway, created.trace), { operation: 'passthrough', path: '/v1/batches', status: 200 });

  const retrieved = api.client('batch-retrieve');
  const again = await retrieved.client.batches.retrieve('batch_xyz789');
  t.is(again.id, 'batch_xyz789');
  t.is(api.received(retrieved.trace).url, '/v1/batches/batch_xyz789');
  t.like(await loggedOnce(api.gateway, retrieved.trace), { operation: 'passthrough', method: 'GET', path: '/v1/batches/batch_xyz789' });
});
