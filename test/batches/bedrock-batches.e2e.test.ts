import test, { type ExecutionContext } from 'ava';
import OpenAI, { toFile } from 'openai';
import { type BedrockBatchesFake, startBedrockBatchesFake } from './bedrock-batches-fake.js';
import { gatewayClient, SECRETS, startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { bedrock } from '../../plugins/providers/bedrock/index.js';
import type { LogEntry } from '../../core/logs/entry.js';

const ACCESS_KEY_ID = 'AKIDBATCHTEST0000001';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYBATCHSECRET';
const REGION = 'eu-central-1';
const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const ROLE = 'arn:aws:iam::123456789012:role/BedrockBatchRole';

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [bedrock()], pricing: { models: { bedrock: { [MODEL]: { input: 1, output: 4 } } } } });
});
test.after.always(() => gateway.close());

const line = (customId: string, content: string) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, max_tokens: 40, messages: [{ role: 'system', content: 'Short.' }, { role: 'user', content }] } });

const cloud = (fake: BedrockBatchesFake, extra: Record<string, string> = {}) => ({
  'x-gateway-provider': 'bedrock',
  'x-gateway-custom-host': fake.origin,
  'x-gateway-cloud-c-region': REGION,
  'x-gateway-cloud-c-secret-access-key': SECRET,
  'x-gateway-cloud-c-batch-s3-uri': 's3://acme-batches/gateway/jobs',
  'x-gateway-cloud-c-batch-role-arn': ROLE,
  ...extra,
});

async function setup(t: ExecutionContext, extra: Record<string, string> = {}): Promise<{ fake: BedrockBatchesFake; client: OpenAI }> {
  const fake = await startBedrockBatchesFake({ accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET }, REGION);
  t.teardown(() => fake.close());
  return { fake, client: gatewayClient(gateway.url, cloud(fake, extra), ACCESS_KEY_ID) };
}
const upload = async (client: OpenAI, lines: string[]) => client.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'), purpose: 'batch' });
const jsonLines = async (client: OpenAI, fileId: string) => (await (await client.files.content(fileId)).text()).trim().split('\n').map((text) => JSON.parse(text));
const entriesOf = (batchId: string): LogEntry[] => gateway.entries().filter((entry) => entry.operation === 'batch' && entry.traceId === batchId);

test('batch inference over S3: input staged, job created, Submitted → Validating → InProgress → PartiallyCompleted; one record fails; charged at half price; one log entry following the job', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('alpha', 'A?'), line('beta', 'B?')]);
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  t.is(batch.status, 'validating');
  const job = fake.only();
  // The job as CreateModelInvocationJob documents it, in Converse form, over the caller's S3 location.
  t.like(job.body, {
    jobName: batch.id.replace(/_/g, '-'),
    roleArn: ROLE,
    modelId: MODEL,
    modelInvocationType: 'Converse',
    inputDataConfig: { s3InputDataConfig: { s3InputFormat: 'JSONL', s3Uri: `s3://acme-batches/gateway/jobs/${batch.id}/input.jsonl` } },
    outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://acme-batches/gateway/jobs/${batch.id}/output/` } },
  });
  // Each record: an 11-character id and the Converse body the chat mapping builds.
  t.deepEqual(
    job.records.map((record) => record.recordId),
    ['00000000000', '00000000001'],
  );
  t.deepEqual(job.records[0].modelInput, { messages: [{ role: 'user', content: [{ text: 'A?' }] }], system: [{ text: 'Short.' }], inferenceConfig: { maxTokens: 40 } });

  fake.move(job.arn, 'Validating');
  t.is((await client.batches.retrieve(batch.id)).status, 'validating');
  fake.move(job.arn, 'InProgress');
  t.is((await client.batches.retrieve(batch.id)).status, 'in_progress');
  fake.move(job.arn, 'PartiallyCompleted', [{ text: 'A.', usage: { input: 300, output: 40 } }, { error: { code: 400, message: 'Malformed input request.' } }]);
  const ended = await client.batches.retrieve(batch.id);
  t.is(ended.status, 'completed');
  t.deepEqual(ended.request_counts, { total: 2, completed: 1, failed: 1 });
  const [output] = await jsonLines(client, ended.output_file_id!);
  t.like(output, { custom_id: 'alpha', response: { status_code: 200, body: { object: 'chat.completion', model: MODEL, choices: [{ message: { content: 'A.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 300, completion_tokens: 40 } } } });
  const [failure] = await jsonLines(client, ended.error_file_id!);
  t.like(failure, { custom_id: 'beta', response: { status_code: 400, body: { error: { message: 'Malformed input request.', type: 'invalid_request_error', provider: 'bedrock' } } } });
  t.deepEqual(fake.problems, [], 'every request signed right: s3 for the objects, bedrock for the jobs');

  await gateway.waitForEntries(gateway.entries().length);
  const entries = entriesOf(batch.id);
  // Its intermediate states are marked `progress` (metrics count the batch once, at its end).
  t.deepEqual(
    entries.map((entry) => [entry.id, entry.metadata['batch.status'], entry.progress]),
    [
      [entries[0].id, 'validating', true],
      [entries[0].id, 'in_progress', true],
      [entries[0].id, 'completed', undefined],
    ],
  );
  // 300 × $0.5 + 40 × $2 per million: Bedrock's declared 50% batch discount.
  t.like(entries.at(-1), { provider: 'bedrock', model: MODEL, costUsd: 0.00023, usage: { promptTokens: 300, completionTokens: 40 }, metadata: { 'batch.succeeded': '1', 'batch.errored': '1' } });
  for (const secret of [...SECRETS, SECRET]) t.false(gateway.rawLog().includes(secret));
});

test('a job that fails validation, one that expires, and one stopped part way: failed with its reason, expired lines, cancelled with what ran', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('a', 'x'), line('b', 'y')]);
  const create = () => client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

  const failing = await create();
  fake.move([...fake.jobs.keys()][0], 'Failed');
  const failed = await client.batches.retrieve(failing.id);
  t.is(failed.status, 'failed');
  t.like(failed.errors!.data![0], { code: 'batch_failed', message: 'The input file has fewer records than the job minimum.' });
  // No output object was written: every line is missing, none charged.
  t.deepEqual(
    (await jsonLines(client, failed.error_file_id!)).map((entry) => entry.error.code),
    ['batch_line_missing', 'batch_line_missing'],
  );

  const expiring = await create();
  fake.move([...fake.jobs.keys()][1], 'Expired');
  const expired = await client.batches.retrieve(expiring.id);
  t.is(expired.status, 'expired');
  t.deepEqual(
    (await jsonLines(client, expired.error_file_id!)).map((entry) => entry.error.code),
    ['batch_expired', 'batch_expired'],
  );

  const stopping = await create();
  const arn = [...fake.jobs.keys()][2];
  fake.move(arn, 'InProgress');
  t.is((await client.batches.cancel(stopping.id)).status, 'cancelling');
  t.true(fake.jobs.get(arn)!.stopRequested);
  fake.move(arn, 'Stopped', [{ text: 'ran', usage: { input: 100, output: 10 } }, undefined]);
  const stopped = await client.batches.retrieve(stopping.id);
  t.is(stopped.status, 'cancelled');
  t.deepEqual(stopped.request_counts, { total: 2, completed: 1, failed: 1 });
  t.like((await jsonLines(client, stopped.error_file_id!))[0], { custom_id: 'b', error: { code: 'batch_cancelled' } });
  await gateway.waitForEntries(gateway.entries().length);
  t.like(entriesOf(stopping.id).at(-1), { costUsd: 0.00007, metadata: { 'batch.status': 'cancelled', 'batch.succeeded': '1', 'batch.cancelled': '1' } });
  t.deepEqual(fake.problems, []);
});

test('without a storage location, a role or a secret key the batch is refused before anything is written', async (t) => {
  const { fake, client } = await setup(t, { 'x-gateway-cloud-c-batch-s3-uri': '' });
  const file = await upload(client, [line('a', 'x')]);
  const create = (headers: Record<string, string>) => client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }, { headers });
  const missing = await t.throwsAsync(create({}));
  t.like((missing as { status?: number; error?: unknown }), { status: 400, error: { code: 'batch_storage_missing', param: 'x-gateway-cloud-c-batch-s3-uri' } });
  const badUri = await t.throwsAsync(create({ 'x-gateway-cloud-c-batch-s3-uri': 's3://Bad_Bucket/x' }));
  t.like((badUri as { error?: unknown }).error, { code: 'invalid_value' });
  const apiKey = await t.throwsAsync(create({ 'x-gateway-cloud-c-batch-s3-uri': 's3://acme-batches/p', 'x-gateway-cloud-c-secret-access-key': '' }));
  t.like((apiKey as { error?: unknown }).error, { code: 'unsupported_signing' });
  t.is(fake.requests.length, 0);
});

test('a virtual key whose stored credential names the S3 location, the role and the secret: the caller sends none of them', async (t) => {
  const fake = await startBedrockBatchesFake({ accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET }, REGION);
  t.teardown(() => fake.close());
  const credential = await admin(gateway, 'POST', '/admin/credentials', {
    name: 'bedrock-batches',
    provider: 'bedrock',
    api_key: ACCESS_KEY_ID,
    fields: { 'x-gateway-cloud-c-secret-access-key': SECRET, 'x-gateway-cloud-c-region': REGION, 'x-gateway-cloud-c-batch-s3-uri': 's3://vault-bucket/team-a', 'x-gateway-cloud-c-batch-role-arn': ROLE },
  });
  t.is(credential.status, 201, credential.text);
  const { key } = await createKey(t, gateway, { name: 'bedrock-batches-key', provider: 'bedrock', credential_id: credential.json.id, custom_host: fake.origin });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', defaultHeaders: { 'x-gateway-api-key': key }, maxRetries: 0 });
  const file = await upload(client, [line('a', 'x')]);
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  t.is(batch.status, 'validating');
  t.like(fake.only().body, { roleArn: ROLE, inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://vault-bucket/team-a/${batch.id}/input.jsonl` } } });
  t.true(fake.objects.has(`vault-bucket/team-a/${batch.id}/input.jsonl`));
  t.deepEqual(fake.problems, []);
  t.false(gateway.rawLog().includes(SECRET));
});
