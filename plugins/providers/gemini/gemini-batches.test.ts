import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { geminiBatches } from './gemini-batches.js';
import { geminiChat } from './gemini-chat.js';

const fixture = (name: string) => readFileSync(join(process.cwd(), 'plugins/providers/gemini/__fixtures__', name), 'utf8');
const target = { baseUrl: 'https://generativelanguage.googleapis.com/v1beta', customHost: false, headers: {}, credentials: { apiKey: 'k' }, strict: true };

test('create: the chat mapping of each line as an inlined request, at the model\'s batchGenerateContent', (t) => {
  const request = { model: 'gemini-2.5-flash', messages: [{ role: 'user' as const, content: 'Hi' }] };
  const upstream = geminiChat.toUpstream(request, target);
  const created = geminiBatches.create([{ customId: 'r0', request, upstream }], target, 'batch_gw_test');
  t.is(created.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:batchGenerateContent');
  const body = JSON.parse(String(created.body));
  t.deepEqual(body.batch.inputConfig.requests.requests, [{ request: JSON.parse(String(upstream.body)), metadata: { key: 'r0' } }]);
});

test('BatchState in OpenAI\'s terms, counts from batchStats', (t) => {
  const operation = JSON.parse(fixture('batch-succeeded.json'));
  t.like(geminiBatches.state(operation), { id: 'batches/123456', status: 'completed', ended: true, counts: { succeeded: 1, failed: 1 } });
  const as = (state: string) => geminiBatches.state({ ...operation, metadata: { ...operation.metadata, state } });
  t.like(as('BATCH_STATE_PENDING'), { status: 'validating', ended: false });
  t.like(as('BATCH_STATE_RUNNING'), { status: 'in_progress', ended: false });
  t.like(as('BATCH_STATE_EXPIRED'), { status: 'expired', ended: true });
  t.like(as('BATCH_STATE_CANCELLED'), { status: 'cancelled', ended: true });
  t.is(geminiBatches.cancel(as('BATCH_STATE_RUNNING'), target).url, 'https://generativelanguage.googleapis.com/v1beta/batches/123456:cancel');
});

test('inlined responses by their key; an error status becomes its HTTP status', (t) => {
  const operation = JSON.parse(fixture('batch-succeeded.json'));
  const results = geminiBatches.lineResults(Buffer.from(JSON.stringify(operation)), geminiBatches.state(operation));
  t.like(results[0], { customId: 'r0', kind: 'succeeded' });
  t.like(results[1], { customId: 'r1', kind: 'errored', status: 400, error: { message: 'Request contains an invalid argument.', type: 'invalid_request_error' } });
});
