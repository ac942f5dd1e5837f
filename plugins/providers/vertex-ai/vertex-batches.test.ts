import test from 'ava';
import { vertexBatches } from './vertex-batches.js';
import { vertexChat } from './vertex-chat.js';

const headers = { 'x-gateway-cloud-b-project-id': 'acme-prod', 'x-gateway-cloud-b-region': 'europe-west4', 'x-gateway-cloud-b-batch-gcs-uri': 'gs://acme-batches/jobs' };
const target = { baseUrl: 'https://europe-west4-aiplatform.googleapis.com/v1', customHost: false, headers, credentials: { apiKey: 'token' }, strict: true };
const adapter = vertexBatches();
const request = { model: 'gemini-2.5-flash', messages: [{ role: 'user' as const, content: 'Hi' }] };
const lines = [{ customId: 'r0', request, upstream: vertexChat({ defaultMaxTokens: 100 }).toUpstream(request, target) }];
const NAME = 'projects/acme-prod/locations/europe-west4/batchPredictionJobs/42';

test('stage on Cloud Storage, create under the project and region the chat mapping named', (t) => {
  const staged = adapter.stage!(lines, target, 'batch_gw_1');
  t.is(staged.url, `https://storage.googleapis.com/upload/storage/v1/b/acme-batches/o?uploadType=media&name=${encodeURIComponent('jobs/batch_gw_1/input.jsonl')}`);
  t.deepEqual(JSON.parse(String(staged.body)), { request: { ...JSON.parse(String(lines[0].upstream.body)), labels: { llm_gateway_line: 'r0' } } });
  const created = adapter.create(lines, target, 'batch_gw_1');
  t.is(created.url, 'https://europe-west4-aiplatform.googleapis.com/v1/projects/acme-prod/locations/europe-west4/batchPredictionJobs');
  t.like(JSON.parse(String(created.body)), { model: 'publishers/google/models/gemini-2.5-flash', inputConfig: { gcsSource: { uris: ['gs://acme-batches/jobs/batch_gw_1/input.jsonl'] } } });
});

test("the job's state in OpenAI's terms; predictions read on Cloud Storage's host", (t) => {
  const job = (state: string) => adapter.state({ name: NAME, state, completionStats: { successfulCount: '2', failedCount: '1', incompleteCount: '0' }, outputInfo: { gcsOutputDirectory: 'gs://acme-batches/jobs/b/output/prediction-model-2026-11-29T00:00:00.000Z' } });
  const expected: Record<string, [string, boolean]> = {
    JOB_STATE_QUEUED: ['validating', false],
    JOB_STATE_PENDING: ['validating', false],
    JOB_STATE_RUNNING: ['in_progress', false],
    JOB_STATE_CANCELLING: ['cancelling', false],
    JOB_STATE_SUCCEEDED: ['completed', true],
    JOB_STATE_PARTIALLY_SUCCEEDED: ['completed', true],
    JOB_STATE_FAILED: ['failed', true],
    JOB_STATE_CANCELLED: ['cancelled', true],
    JOB_STATE_EXPIRED: ['expired', true],
  };
  for (const [state, [status, ended]] of Object.entries(expected)) t.like(job(state), { status, ended }, state);
  t.deepEqual(job('JOB_STATE_SUCCEEDED').counts, { succeeded: 2, failed: 1, processing: 0 });
  t.is(adapter.results(job('JOB_STATE_SUCCEEDED'), target)!.url, `https://storage.googleapis.com/storage/v1/b/acme-batches/o/${encodeURIComponent('jobs/b/output/prediction-model-2026-11-29T00:00:00.000Z/predictions.jsonl')}?alt=media`);
  t.is(adapter.results(adapter.state({ name: NAME, state: 'JOB_STATE_FAILED' }), target), undefined);
  t.throws(() => adapter.state({ name: 'projects/x/../../secrets', state: 'JOB_STATE_RUNNING' }));
});

test('predictions: a response by its line label, a status as an error', (t) => {
  const out = [
    JSON.stringify({ status: '', request: { labels: { llm_gateway_line: 'r1' } }, response: { candidates: [] } }),
    JSON.stringify({ status: 'Bad Request: code 400, invalid', request: { labels: { llm_gateway_line: 'r0' } } }),
    JSON.stringify({ status: 'Internal error', request: { labels: { llm_gateway_line: 'r2' } } }),
  ].join('\n');
  const results = adapter.lineResults(Buffer.from(out), adapter.state({ name: NAME, state: 'JOB_STATE_SUCCEEDED' }));
  t.like(results[0], { customId: 'r1', kind: 'succeeded' });
  t.like(results[1], { customId: 'r0', kind: 'errored', status: 400, error: { type: 'invalid_request_error' } });
  t.like(results[2], { customId: 'r2', kind: 'errored', status: 500 });
});
