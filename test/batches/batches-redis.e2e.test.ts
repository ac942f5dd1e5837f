import { randomBytes } from 'node:crypto';
import test from 'ava';
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { type AnthropicBatchesFake, startAnthropicBatchesFake } from './anthropic-batches-fake.js';
import { gatewayClient, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';

// Two instances sharing Redis: a file and a batch made on one are served by the other, and an ended
// batch read on both at once is ended (results read, charged, logged) once.
let fake: AnthropicBatchesFake;
let a: TestGateway;
let b: TestGateway;
const prefix = `test-batches-${process.pid}-${randomBytes(4).toString('hex')}`;
let available = false;

test.before(async () => {
  available = await redisAvailable();
  if (!available) return;
  fake = await startAnthropicBatchesFake(PROVIDER_KEY);
  const environment = { REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') };
  const config = { providers: [anthropic()], pricing: { models: { anthropic: { 'claude-test': { input: 2, output: 10 } } } } };
  a = await startGateway(config, environment);
  b = await startGateway(config, environment);
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await fake?.close();
  if (available) await clearRedisPrefix(prefix);
});

const client = (gateway: TestGateway): OpenAI => gatewayClient(gateway.url, { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': fake.baseUrl });

test('a batch made on one instance is read on another; read on both once it has ended, it ends once', async (t) => {
  if (!available) return t.pass('Redis is unreachable: skipped');
  const body = { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] };
  const jsonl = ['one', 'two'].map((custom_id) => JSON.stringify({ custom_id, method: 'POST', url: '/v1/chat/completions', body })).join('\n');
  const file = await client(a).files.create({ file: await toFile(Buffer.from(jsonl), 'in.jsonl'), purpose: 'batch' });
  t.is((await client(b).files.retrieve(file.id)).bytes, Buffer.byteLength(jsonl));
  const batch = await client(b).batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  t.is((await client(a).batches.retrieve(batch.id)).status, 'in_progress');
  fake.end(fake.only().id, { r0: { type: 'succeeded', text: 'Hello', usage: { input_tokens: 10, output_tokens: 5 } }, r1: { type: 'succeeded', text: 'Hey', usage: { input_tokens: 10, output_tokens: 5 } } });
  const reads = await Promise.all([client(a).batches.retrieve(batch.id), client(b).batches.retrieve(batch.id), client(a).batches.retrieve(batch.id), client(b).batches.retrieve(batch.id)]);
  t.true(reads.some((read) => read.status === 'completed'));
  for (const read of reads) t.true(read.status === 'completed' || read.status === 'finalizing', read.status);
  t.is(fake.requests.filter((request) => request.url.endsWith('/results')).length, 1, 'the results were read once');
  const ended = await client(b).batches.retrieve(batch.id);
  t.is(ended.status, 'completed');
  const output = (await (await client(a).files.content(ended.output_file_id!)).text()).trim().split('\n');
  t.is(output.length, 2);
  const logged = [...a.entries(), ...b.entries()].filter((entry) => entry.operation === 'batch' && entry.traceId === batch.id);
  // One entry (one id), written at creation and once more when the batch ended, on whichever instance ended it.
  t.is(new Set(logged.map((entry) => entry.id)).size, 1, 'one log entry');
  t.is(logged.filter((entry) => entry.metadata['batch.status'] === 'completed').length, 1, 'its final state written once');
});
