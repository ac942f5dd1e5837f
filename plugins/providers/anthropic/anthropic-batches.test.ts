import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { anthropicBatches } from './anthropic-batches.js';

const fixture = (name: string) => readFileSync(join(process.cwd(), 'plugins/providers/anthropic/__fixtures__', name), 'utf8');
const target = { baseUrl: 'https://api.anthropic.com/v1', customHost: false, headers: {}, credentials: { apiKey: 'k' }, strict: true };

test('create wraps each line\'s mapped chat body as params, under the line id', (t) => {
  const upstream = { method: 'POST' as const, url: 'https://api.anthropic.com/v1/messages', headers: {}, body: JSON.stringify({ model: 'claude-x', max_tokens: 5, messages: [] }) };
  const request = anthropicBatches.create([{ customId: 'r0', request: { model: 'claude-x', messages: [] }, upstream }], target, 'batch_gw_test');
  t.is(request.url, 'https://api.anthropic.com/v1/messages/batches');
  t.deepEqual(JSON.parse(String(request.body)), { requests: [{ custom_id: 'r0', params: { model: 'claude-x', max_tokens: 5, messages: [] } }] });
});

test('processing_status in OpenAI\'s terms', (t) => {
  const ended = JSON.parse(fixture('batch-ended.json'));
  t.like(anthropicBatches.state(ended), { id: 'msgbatch_013Zva2CMHLNnXjNJJKqJ2EF', status: 'completed', ended: true, counts: { succeeded: 1, failed: 2, processing: 0 } });
  t.like(anthropicBatches.state({ ...ended, processing_status: 'in_progress' }), { status: 'in_progress', ended: false });
  t.like(anthropicBatches.state({ ...ended, processing_status: 'canceling', cancel_initiated_at: 'x' }), { status: 'cancelling', ended: false });
  t.like(anthropicBatches.state({ ...ended, cancel_initiated_at: 'x' }), { status: 'cancelled', ended: true });
  t.like(anthropicBatches.state({ ...ended, request_counts: { expired: 3 } }), { status: 'expired' });
});

test('results: the documented path on the target host (not results_url), each line by kind, errors with the status of their type', (t) => {
  const state = anthropicBatches.state(JSON.parse(fixture('batch-ended.json')));
  t.is(anthropicBatches.results(state, { ...target, baseUrl: 'http://127.0.0.1:9/v1' })!.url, 'http://127.0.0.1:9/v1/messages/batches/msgbatch_013Zva2CMHLNnXjNJJKqJ2EF/results');
  const results = anthropicBatches.lineResults(Buffer.from(fixture('batch-results.jsonl')), state);
  t.deepEqual(
    results.map((result) => [result.customId, result.kind]),
    [['r2', 'expired'], ['r0', 'succeeded'], ['r1', 'errored']],
  );
  t.like(results[2], { status: 400, error: { type: 'invalid_request_error', message: 'max_tokens: 100000 > 8192' } });
});
