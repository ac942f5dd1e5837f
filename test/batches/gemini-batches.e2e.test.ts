import test, { type ExecutionContext } from 'ava';
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { type GeminiBatchesFake, startGeminiBatchesFake } from './gemini-batches-fake.js';
import { gatewayClient, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { gemini } from '../../plugins/providers/gemini/index.js';

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [gemini()], pricing: { models: { gemini: { 'gemini-test': { input: 1, output: 4 } } } } });
});
test.after.always(() => gateway.close());

const line = (customId: string, content: string, model = 'gemini-test') =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, max_tokens: 30, messages: [{ role: 'system', content: 'Short.' }, { role: 'user', content }] } });

async function setup(t: ExecutionContext): Promise<{ fake: GeminiBatchesFake; client: OpenAI }> {
  const fake = await startGeminiBatchesFake(PROVIDER_KEY);
  t.teardown(() => fake.close());
  return { fake, client: gatewayClient(gateway.url, { 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': `${fake.origin}/v1beta` }) };
}
const upload = async (client: OpenAI, lines: string[]) => client.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'), purpose: 'batch' });
const jsonLines = async (client: OpenAI, fileId: string) => (await (await client.files.content(fileId)).text()).trim().split('\n').map((text) => JSON.parse(text));

test('batch mode: pending → running → succeeded with one failed line; lines mapped like chat; results inline, in input order', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('alpha', 'A?'), line('beta', 'B?')]);
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  t.is(batch.status, 'validating');
  const sent = fake.only();
  t.is(sent.model, 'gemini-test');
  t.deepEqual(
    sent.requests.map((request) => request.metadata.key),
    ['r0', 'r1'],
  );
  // The chat mapping's body: system instruction, contents, generationConfig.
  t.like(sent.requests[0].request, { systemInstruction: { parts: [{ text: 'Short.' }] }, contents: [{ role: 'user', parts: [{ text: 'A?' }] }], generationConfig: { maxOutputTokens: 30 } });

  fake.move(sent.name, 'BATCH_STATE_RUNNING');
  t.is((await client.batches.retrieve(batch.id)).status, 'in_progress');
  fake.move(sent.name, 'BATCH_STATE_SUCCEEDED', [{ text: 'A.', usage: { prompt: 200, output: 50 } }, { error: { code: 8, message: 'Resource exhausted.' } }]);
  const ended = await client.batches.retrieve(batch.id);
  t.is(ended.status, 'completed');
  t.deepEqual(ended.request_counts, { total: 2, completed: 1, failed: 1 });
  const [output] = await jsonLines(client, ended.output_file_id!);
  t.like(output, { custom_id: 'alpha', response: { status_code: 200, body: { choices: [{ message: { content: 'A.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 200, completion_tokens: 50 } } } });
  const [failure] = await jsonLines(client, ended.error_file_id!);
  t.like(failure, { custom_id: 'beta', response: { status_code: 429, body: { error: { message: 'Resource exhausted.', provider: 'gemini' } } } });
  await gateway.waitForEntries(gateway.entries().length);
  // 200 × $0.5 + 50 × $2 per million: Gemini's declared 50% batch discount.
  t.like(
    gateway.entries().findLast((entry) => entry.operation === 'batch' && entry.traceId === batch.id),
    { provider: 'gemini', costUsd: 0.0002, metadata: { 'batch.succeeded': '1', 'batch.errored': '1' } },
  );
});

test('one model per Gemini batch: a mixed input fails validation naming the line', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('a', 'x'), line('b', 'y', 'gemini-other')]);
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  t.is(batch.status, 'failed');
  t.like(batch.errors!.data![0], { line: 2, code: 'mismatched_model', param: 'body.model' });
  t.is(fake.requests.length, 0);
});

test('an expired batch: every line in the error file as batch_expired, nothing charged; a cancel reads the state again', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('a', 'x'), line('b', 'y')]);
  const expiring = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  fake.move(fake.only().name, 'BATCH_STATE_EXPIRED');
  const expired = await client.batches.retrieve(expiring.id);
  t.is(expired.status, 'expired');
  t.is(expired.output_file_id as string | null, null, 'nothing ran: no output file');
  t.deepEqual(
    (await jsonLines(client, expired.error_file_id!)).map((entry) => entry.error.code),
    ['batch_expired', 'batch_expired'],
  );

  const cancelling = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  const name = [...fake.batches.keys()][1];
  fake.move(name, 'BATCH_STATE_RUNNING');
  t.is((await client.batches.cancel(cancelling.id)).status, 'cancelling');
  t.true(fake.batches.get(name)!.cancelRequested);
  fake.move(name, 'BATCH_STATE_CANCELLED');
  const cancelled = await client.batches.retrieve(cancelling.id);
  t.is(cancelled.status, 'cancelled');
  t.deepEqual(
    (await jsonLines(client, cancelled.error_file_id!)).map((entry) => entry.error.code),
    ['batch_cancelled', 'batch_cancelled'],
  );
  const cancelAgain = await fetch(`${gateway.url}/v1/batches/${cancelling.id}/cancel`, { method: 'POST', headers: { 'x-gateway-api-key': 'gw-test-account-key-0123456789', 'x-gateway-provider': 'gemini', 'x-gateway-custom-host': `${fake.origin}/v1beta`, authorization: `Bearer ${PROVIDER_KEY}` } });
  t.is(cancelAgain.status, 400);
  t.is(((await cancelAgain.json()) as { error: { code: string } }).error.code, 'batch_not_cancellable');
});

test('a batch the provider fails as a whole: failed, its reason in errors, every line in the error file', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('a', 'x')]);
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  fake.move(fake.only().name, 'BATCH_STATE_FAILED');
  const failed = await client.batches.retrieve(batch.id);
  t.is(failed.status, 'failed');
  t.truthy(failed.failed_at);
  t.like(failed.errors!.data![0], { code: 'batch_failed', message: 'The batch input was refused.' });
  t.like((await jsonLines(client, failed.error_file_id!))[0], { custom_id: 'a', error: { code: 'batch_line_missing' } });
  t.like(
    gateway.entries().findLast((entry) => entry.operation === 'batch' && entry.traceId === batch.id),
    { status: 400, outcome: 'error', error: { code: 'batch_failed' } },
  );
});
