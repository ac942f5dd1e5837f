import test, { type ExecutionContext } from 'ava';
import OpenAI, { toFile } from 'openai';
import { type AnthropicBatchesFake, startAnthropicBatchesFake } from './anthropic-batches-fake.js';
import { startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, gatewayClient, PROVIDER_KEY, SECRETS, startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import type { LogEntry } from '../../core/logs/entry.js';

// Prices per million tokens; Anthropic's declared batch discount (50%) halves them for a batch.
const PRICE = { input: 2, output: 10 };

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [anthropic(), openai()], pricing: { models: { anthropic: { 'claude-test': PRICE, 'claude-config': { ...PRICE, batchDiscount: 0.25 } } } } });
});
test.after.always(() => gateway.close());

const line = (customId: string, content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model: 'claude-test', max_tokens: 50, messages: [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content }], ...extra } });

async function setup(t: ExecutionContext): Promise<{ fake: AnthropicBatchesFake; client: OpenAI }> {
  const fake = await startAnthropicBatchesFake(PROVIDER_KEY);
  t.teardown(() => fake.close());
  return { fake, client: gatewayClient(gateway.url, { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': fake.baseUrl }) };
}

const upload = async (client: OpenAI, lines: string[]) => client.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'requests.jsonl'), purpose: 'batch' });
const jsonLines = async (client: OpenAI, fileId: string) => (await (await client.files.content(fileId)).text()).trim().split('\n').map((text) => JSON.parse(text));
/** The batch's log entry in its latest state (each state is written again under the entry's one id). */
const batchEntry = (batchId: string): LogEntry | undefined => gateway.entries().findLast((entry) => entry.operation === 'batch' && entry.traceId === batchId);

test('a batch that partly fails: lines mapped like chat, the documented lifecycle, OpenAI output and error files, charged once at the batch price', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('first', 'One?'), line('second', 'Two?'), line('third', 'Three?')]);
  t.regex(file.id, /^file-gw_[0-9a-f]{24}$/);
  t.like(file, { object: 'file', purpose: 'batch', filename: 'requests.jsonl' });
  t.is(fake.requests.length, 0, 'the file stays with the gateway');

  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
  t.regex(batch.id, /^batch_gw_[0-9a-f]{24}$/);
  t.is(batch.status, 'in_progress');
  t.deepEqual(batch.request_counts, { total: 3, completed: 0, failed: 0 });
  const sent = fake.only();
  t.deepEqual(
    sent.requests.map((request) => request.custom_id),
    ['r0', 'r1', 'r2'],
  );
  // The same mapping as a single chat call: developer → system, max_tokens kept.
  t.deepEqual(sent.requests[0].params, { model: 'claude-test', max_tokens: 50, system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: 'One?' }] });

  t.is((await client.batches.retrieve(batch.id)).status, 'in_progress');
  fake.end(sent.id, {
    r0: { type: 'succeeded', text: 'One.', usage: { input_tokens: 100, output_tokens: 20 } },
    r1: { type: 'errored', errorType: 'invalid_request_error', message: 'prompt is too long' },
    r2: { type: 'expired' },
  });
  const ended = await client.batches.retrieve(batch.id);
  t.is(ended.status, 'completed');
  t.deepEqual(ended.request_counts, { total: 3, completed: 1, failed: 2 });
  t.truthy(ended.completed_at);

  const output = await jsonLines(client, ended.output_file_id!);
  t.is(output.length, 1);
  t.like(output[0], { custom_id: 'first', error: null, response: { status_code: 200 } });
  t.like(output[0].response.body, { object: 'chat.completion', model: 'claude-test', choices: [{ message: { role: 'assistant', content: 'One.' }, finish_reason: 'stop' }] });
  t.like(output[0].response.body.usage, { prompt_tokens: 100, completion_tokens: 20 });
  const failures = await jsonLines(client, ended.error_file_id!);
  t.deepEqual(
    failures.map((entry) => entry.custom_id),
    ['second', 'third'],
  );
  t.like(failures[0], { response: { status_code: 400, body: { error: { message: 'prompt is too long', type: 'invalid_request_error' } } }, error: null });
  t.like(failures[1], { response: null, error: { code: 'batch_expired' } });

  // Ended once: later reads neither fetch the results again nor log again.
  const resultReads = () => fake.requests.filter((request) => request.url.endsWith('/results')).length;
  t.is(resultReads(), 1);
  t.is((await client.batches.retrieve(batch.id)).status, 'completed');
  t.is(resultReads(), 1);
  await gateway.waitForEntries(gateway.entries().length);
  const entries = gateway.entries().filter((entry) => entry.operation === 'batch' && entry.traceId === batch.id);
  // One entry, written at creation and again when the batch ended (its latest state), never after.
  t.deepEqual(
    entries.map((entry) => [entry.id, entry.replaces, entry.metadata['batch.status']]),
    [
      [entries[0].id, true, 'in_progress'],
      [entries[0].id, true, 'completed'],
    ],
  );
  // 100 × $1 + 20 × $5 per million (half of $2 and $10).
  t.like(entries[1], { provider: 'anthropic', model: 'claude-test', status: 200, costUsd: 0.0002, usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120 } });
  t.like(entries[1].metadata, { 'batch.status': 'completed', 'batch.lines': '3', 'batch.succeeded': '1', 'batch.errored': '1', 'batch.expired': '1', job: 'nightly' });
  // The entry reaches the durable request log (the admin API's explorer) like any request's.
  const deadline = Date.now() + 5000;
  let stored = (await admin(gateway, 'GET', `/admin/logs?trace_id=${batch.id}`)).json;
  while (stored.data[0]?.metadata['batch.status'] !== 'completed' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    stored = (await admin(gateway, 'GET', `/admin/logs?trace_id=${batch.id}`)).json;
  }
  // The stored row was replaced by the batch's later state: one row, the latest.
  t.is(stored.data.length, 1);
  t.like(stored.data[0], { id: entries[0].id, operation: 'batch', provider: 'anthropic', status: 200, cost_usd: 0.0002, metadata: { 'batch.status': 'completed', 'batch.succeeded': '1' } });
  const listed = await client.batches.list();
  t.true(listed.data.some((item) => item.id === batch.id));
  for (const secret of SECRETS) t.false(gateway.rawLog().includes(secret));
});

test('an input with bad lines fails validation by line: nothing is sent to the provider', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('a', 'fine'), '{not json', line('a', 'duplicate'), JSON.stringify({ custom_id: 'c', method: 'POST', url: '/v1/chat/completions', body: { model: 'claude-test', messages: [] } })]);
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  t.is(batch.status, 'failed');
  t.deepEqual(
    batch.errors!.data!.map((error) => [error.line, error.code, error.param]),
    [
      [2, 'invalid_json_line', null],
      [3, 'duplicate_custom_id', 'custom_id'],
      [4, 'invalid_value', 'body.messages'],
    ],
  );
  t.is(fake.requests.length, 0);
  const unsupported = await t.throwsAsync(client.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings' as '/v1/chat/completions', completion_window: '24h' }));
  t.is((unsupported as InstanceType<typeof OpenAI.BadRequestError>).status, 400);
});

test('another key gets 404 for a batch and a file; a batch is read with the provider it was made for', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('only', 'Hi')]);
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  const { key } = await createKey(t, gateway, { name: 'batches-other', provider: 'anthropic', provider_key: PROVIDER_KEY, custom_host: fake.baseUrl });
  const other = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', defaultHeaders: { 'x-gateway-api-key': key }, maxRetries: 0 });
  for (const call of [() => other.batches.retrieve(batch.id), () => other.files.retrieve(file.id), () => other.files.content(file.id), () => other.batches.cancel(batch.id)]) {
    const error = await t.throwsAsync(call());
    t.is((error as { status?: number }).status, 404);
  }
  t.false((await other.batches.list()).data.some((item) => item.id === batch.id));
  const wrongProvider = await fetch(`${gateway.url}/v1/batches/${batch.id}`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', authorization: `Bearer ${PROVIDER_KEY}` } });
  t.is(wrongProvider.status, 400);
  t.is(((await wrongProvider.json()) as { error: { code: string } }).error.code, 'batch_provider_mismatch');
  t.is(fake.requests.filter((request) => request.method === 'GET').length, 0, 'no read reached the provider');
});

test.serial('a virtual key with a budget: the estimate is reserved at creation; a cancelled batch settles what ran, at the configured batch discount', async (t) => {
  const { fake } = await setup(t);
  const { id, key } = await createKey(t, gateway, { name: 'batches-budget', provider: 'anthropic', provider_key: PROVIDER_KEY, custom_host: fake.baseUrl, limits: { budget_usd: 1 } });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', defaultHeaders: { 'x-gateway-api-key': key }, maxRetries: 0 });
  const model = { model: 'claude-config' };
  const file = await upload(client, [line('x', 'a', model), line('y', 'b', model)]);
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  const usage = async () => (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
  const reserved = (await usage()).reserved_usd;
  t.true(reserved > 0, 'the estimate is reserved');

  const cancelling = await client.batches.cancel(batch.id);
  t.is(cancelling.status, 'cancelling');
  fake.end(fake.only().id, { r0: { type: 'succeeded', text: 'ran', usage: { input_tokens: 1000, output_tokens: 100 } } });
  const cancelled = await client.batches.retrieve(batch.id);
  t.is(cancelled.status, 'cancelled');
  t.deepEqual(cancelled.request_counts, { total: 2, completed: 1, failed: 1 });
  t.like((await jsonLines(client, cancelled.error_file_id!))[0], { custom_id: 'y', error: { code: 'batch_cancelled' } });
  // 1000 × $1.5 + 100 × $7.5 per million: the configured 25% discount wins over Anthropic's 50%.
  const after = await usage();
  t.is(after.reserved_usd, 0);
  t.is(after.spend_usd.total, 0.00225);
  t.like(batchEntry(batch.id), { costUsd: 0.00225, keyId: id });
});

test('a budget too small for the estimate refuses the batch before anything is created', async (t) => {
  const { fake } = await setup(t);
  const { key } = await createKey(t, gateway, { name: 'batches-poor', provider: 'anthropic', provider_key: PROVIDER_KEY, custom_host: fake.baseUrl, limits: { budget_usd: 0.0000001 } });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', defaultHeaders: { 'x-gateway-api-key': key }, maxRetries: 0 });
  const file = await upload(client, [line('x', 'a')]);
  const error = await t.throwsAsync(client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }));
  t.is((error as { status?: number }).status, 403);
  t.is(fake.requests.length, 0);
});

test('a provider that speaks OpenAI keeps files and batches passed through', async (t) => {
  const fake = await startFake((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'file-upstream1', object: 'file', bytes: 3, created_at: 1, filename: 'requests.jsonl', purpose: 'batch' }));
  });
  t.teardown(() => fake.close());
  const client = gatewayClient(gateway.url, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl });
  const file = await upload(client, [line('x', 'a')]);
  t.is(file.id, 'file-upstream1');
  t.is(fake.requests[0].url, '/v1/files');
  // An OpenAI id that happens to have the gateway's form is still the provider's.
  const lookalike = await client.files.retrieve('file-gw_0123');
  t.is(lookalike.id, 'file-upstream1');
  t.is(fake.requests[1].url, '/v1/files/file-gw_0123');
});

test('the provider refusing or garbling a create: its error with its status, or 502 upstream_invalid_response; no batch is kept', async (t) => {
  const { fake, client } = await setup(t);
  const file = await upload(client, [line('x', 'a')]);
  const create = () => client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  const wrongKey = gatewayClient(gateway.url, { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': fake.baseUrl }, 'sk-wrong-key-0123456789');
  // The owner is the gateway key (here the account key): the file is found, and the provider refuses the credential.
  const unauthorised = await t.throwsAsync(wrongKey.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }));
  t.is((unauthorised as { status?: number }).status, 401);
  t.like((unauthorised as { error?: unknown }).error, { type: 'authentication_error', provider: 'anthropic' });
  fake.handle((_request, response) => void response.writeHead(200, { 'content-type': 'application/json' }).end('{"unexpected": true}'));
  const garbled = await t.throwsAsync(create());
  t.is((garbled as { status?: number }).status, 502);
  t.like((garbled as { error?: unknown }).error, { code: 'upstream_invalid_response' });
  t.false((await client.batches.list()).data.some((item) => item.input_file_id === file.id));
});
