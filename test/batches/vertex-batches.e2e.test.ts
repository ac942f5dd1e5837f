import test, { type ExecutionContext } from 'ava';
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { startVertexBatchesFake, type VertexBatchesFake } from './vertex-batches-fake.js';
import { gatewayClient, PROVIDER_KEY, SECRETS, startGateway, type TestGateway } from '../harness.js';
import { vertexAI } from '../../plugins/providers/vertex-ai/index.js';
import type { LogEntry } from '../../core/logs/entry.js';

const MODEL = 'gemini-batch-test';

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [vertexAI()], pricing: { models: { 'vertex-ai': { [MODEL]: { input: 1, output: 4 } } } } });
});
test.after.always(() => gateway.close());

const line = (customId: string, content: string, model = MODEL) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, max_tokens: 30, messages: [{ role: 'system', content: 'Short.' }, { role: 'user', content }] } });

async function setup(t: ExecutionContext, extra: Record<string, string> = {}): Promise<{ fake: VertexBatchesFake; client: OpenAI }> {
  const fake = await startVertexBatchesFake(PROVIDER_KEY);
  t.teardown(() => fake.close());
  const headers = {
    'x-gateway-provider': 'vertex-ai',
    'x-gateway-custom-host': fake.baseUrl,
    'x-gateway-cloud-b-project-id': 'acme-prod',
    'x-gateway-cloud-b-region': 'us-central1',
    'x-gateway-cloud-b-batch-gcs-uri': 'gs://acme-batches/gateway',
    ...extra,
  };
  return { fake, client: gatewayClient(gateway.url, headers) };
}
const upload = async (client: OpenAI, lines: string[]) => client.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'), purpose: 'batch' });
const jsonLines = async (client: OpenAI, fileId: string) => (await (await client.files.content(fileId)).text()).trim().split('\n').map((text) => JSON.parse(text));
const entriesOf = (batchId: string): LogEntry[] => gateway.entries().filter((entry) => entry.operation === 'batch' && entry.traceId === batchId);

test('batch prediction over Cloud Storage: input uploaded, job created, PENDING → RUNNING → PARTIALLY_SUCCEEDED; results in any order mapped back by line; charged at half price', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('alpha', 'A?'), line('beta', 'B?'), line('gamma', 'C?')]);
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
  t.is(batch.status, 'validating');
  const job = fake.only();
  t.like(job.body, {
    displayName: batch.id,
    model: `publishers/google/models/${MODEL}`,
    inputConfig: { instancesFormat: 'jsonl', gcsSource: { uris: [`gs://acme-batches/gateway/${batch.id}/input.jsonl`] } },
    outputConfig: { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: `gs://acme-batches/gateway/${batch.id}/output` } },
  });
  t.regex(job.name, /^projects\/acme-prod\/locations\/us-central1\/batchPredictionJobs\/\d+$/);
  // Each line: the generateContent body of the chat mapping, labelled with its line id.
  t.deepEqual(job.requests[0], {
    contents: [{ role: 'user', parts: [{ text: 'A?' }] }],
    systemInstruction: { parts: [{ text: 'Short.' }] },
    generationConfig: { maxOutputTokens: 30 },
    labels: { llm_gateway_line: 'r0' },
  });

  fake.move(job.name, 'JOB_STATE_RUNNING');
  t.is((await client.batches.retrieve(batch.id)).status, 'in_progress');
  fake.move(job.name, 'JOB_STATE_PARTIALLY_SUCCEEDED', [{ text: 'A.', usage: { prompt: 200, output: 50 } }, { status: 'Bad Request: {"error": {"code": 400, "message": "Invalid argument."}}' }, { text: 'C.', usage: { prompt: 100, output: 10 } }]);
  const ended = await client.batches.retrieve(batch.id);
  t.is(ended.status, 'completed');
  t.deepEqual(ended.request_counts, { total: 3, completed: 2, failed: 1 });
  const output = await jsonLines(client, ended.output_file_id!);
  t.deepEqual(
    output.map((entry) => [entry.custom_id, entry.response.body.choices[0].message.content]),
    [
      ['alpha', 'A.'],
      ['gamma', 'C.'],
    ],
    'in input order, whatever order the predictions came in',
  );
  const [failure] = await jsonLines(client, ended.error_file_id!);
  t.like(failure, { custom_id: 'beta', response: { status_code: 400, body: { error: { type: 'invalid_request_error', provider: 'vertex-ai' } } } });

  await gateway.waitForEntries(gateway.entries().length);
  const entries = entriesOf(batch.id);
  t.deepEqual(
    entries.map((entry) => [entry.id, entry.metadata['batch.status']]),
    ['validating', 'in_progress', 'completed'].map((status) => [entries[0].id, status]),
  );
  // 300 × $0.5 + 60 × $2 per million: Vertex AI's declared 50% batch discount.
  t.like(entries.at(-1), { provider: 'vertex-ai', costUsd: 0.00027, metadata: { job: 'nightly', 'batch.succeeded': '2', 'batch.errored': '1' } });
  for (const secret of SECRETS) t.false(gateway.rawLog().includes(secret));
});

test('a failed job with its reason, a cancelled one with what ran, an expired one; no location is a 400; Claude is not batched here', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('a', 'x'), line('b', 'y')]);
  const create = () => client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

  const failing = await create();
  fake.move([...fake.jobs.keys()][0], 'JOB_STATE_FAILED');
  const failed = await client.batches.retrieve(failing.id);
  t.is(failed.status, 'failed');
  t.like(failed.errors!.data![0], { code: 'batch_failed', message: 'Invalid input: the model does not support batch prediction.' });

  const cancelling = await create();
  const name = [...fake.jobs.keys()][1];
  fake.move(name, 'JOB_STATE_RUNNING');
  t.is((await client.batches.cancel(cancelling.id)).status, 'cancelling');
  t.true(fake.jobs.get(name)!.cancelRequested);
  fake.move(name, 'JOB_STATE_CANCELLED', [{ text: 'ran', usage: { prompt: 100, output: 10 } }, undefined]);
  const cancelled = await client.batches.retrieve(cancelling.id);
  t.is(cancelled.status, 'cancelled');
  t.like((await jsonLines(client, cancelled.error_file_id!))[0], { custom_id: 'b', error: { code: 'batch_cancelled' } });
  await gateway.waitForEntries(gateway.entries().length);
  t.like(entriesOf(cancelling.id).at(-1), { costUsd: 0.00007, metadata: { 'batch.status': 'cancelled' } });

  const expiring = await create();
  fake.move([...fake.jobs.keys()][2], 'JOB_STATE_EXPIRED');
  const expired = await client.batches.retrieve(expiring.id);
  t.is(expired.status, 'expired');
  t.deepEqual(
    (await jsonLines(client, expired.error_file_id!)).map((entry) => entry.error.code),
    ['batch_expired', 'batch_expired'],
  );

  const requests = fake.requests.length;
  const noLocation = await t.throwsAsync(client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }, { headers: { 'x-gateway-cloud-b-batch-gcs-uri': '' } }));
  t.like(noLocation, { status: 400, error: { code: 'batch_storage_missing' } });
  const claude = await upload(client, [line('c', 'x', 'claude-sonnet-4-5')]);
  const refused = await t.throwsAsync(client.batches.create({ input_file_id: claude.id, endpoint: '/v1/chat/completions', completion_window: '24h' }));
  t.like(refused, { status: 400, error: { code: 'unsupported_operation' } });
  t.is(fake.requests.length, requests, 'nothing was sent for either');
});
