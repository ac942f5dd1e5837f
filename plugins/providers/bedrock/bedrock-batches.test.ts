import test from 'ava';
import { bedrockBatches } from './bedrock-batches.js';
import { bedrockChat } from './bedrock-chat.js';

const headers = { 'x-gateway-cloud-c-secret-access-key': 'secret', 'x-gateway-cloud-c-batch-s3-uri': 's3://acme-batches/jobs/', 'x-gateway-cloud-c-batch-role-arn': 'arn:aws:iam::123456789012:role/Batch' };
const target = { baseUrl: 'https://bedrock-runtime.eu-west-1.amazonaws.com', customHost: false, headers, credentials: { apiKey: 'AKID' }, strict: true };
const adapter = bedrockBatches({ region: () => 'eu-west-1' });
const ARN = 'arn:aws:bedrock:eu-west-1:123456789012:model-invocation-job/abc123';
const request = { model: 'amazon.nova-lite-v1:0', max_tokens: 9, messages: [{ role: 'user' as const, content: 'Hi' }] };
const lines = [{ customId: 'r0', request, upstream: bedrockChat.toUpstream(request, target) }];

test('stage and create: the records on S3 (virtual-hosted, signed for s3), the job on the control plane', (t) => {
  const staged = adapter.stage!(lines, target, 'batch_gw_1');
  t.is(staged.method, 'PUT');
  t.is(staged.url, 'https://acme-batches.s3.eu-west-1.amazonaws.com/jobs/batch_gw_1/input.jsonl');
  t.regex(staged.headers['x-amz-content-sha256'], /^[0-9a-f]{64}$/);
  t.deepEqual(JSON.parse(String(staged.body)), { recordId: '00000000000', modelInput: JSON.parse(String(lines[0].upstream.body)) });
  const created = adapter.create(lines, target, 'batch_gw_1');
  t.is(created.url, 'https://bedrock.eu-west-1.amazonaws.com/model-invocation-job');
  t.like(JSON.parse(String(created.body)), { jobName: 'batch-gw-1', modelId: 'amazon.nova-lite-v1:0', modelInvocationType: 'Converse', timeoutDurationInHours: 24 });
  // A bucket with dots: path style (the wildcard certificate does not cover it).
  t.is(adapter.stage!(lines, { ...target, headers: { ...headers, 'x-gateway-cloud-c-batch-s3-uri': 's3://acme.batches' } }, 'b').url, 'https://s3.eu-west-1.amazonaws.com/acme.batches/b/input.jsonl');
});

test("the job's status in OpenAI's terms; the results object beside the job's output, on S3's host", (t) => {
  const job = (status: string) =>
    adapter.state({
      jobArn: ARN,
      status,
      totalRecordCount: 3,
      processedRecordCount: 2,
      successRecordCount: 1,
      errorRecordCount: 1,
      inputDataConfig: { s3InputDataConfig: { s3Uri: 's3://acme-batches/jobs/b/input.jsonl' } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: 's3://acme-batches/jobs/b/output/' } },
    });
  t.like(adapter.state({ jobArn: ARN }), { id: ARN, status: 'validating', ended: false });
  const expected: Record<string, [string, boolean]> = {
    Submitted: ['validating', false],
    Validating: ['validating', false],
    Scheduled: ['in_progress', false],
    InProgress: ['in_progress', false],
    Stopping: ['cancelling', false],
    Completed: ['completed', true],
    PartiallyCompleted: ['completed', true],
    Failed: ['failed', true],
    Stopped: ['cancelled', true],
    Expired: ['expired', true],
  };
  for (const [status, [openai, ended]] of Object.entries(expected)) t.like(job(status), { status: openai, ended }, status);
  t.deepEqual(job('InProgress').counts, { succeeded: 1, failed: 1, processing: 1 });
  t.is(adapter.results(job('Completed'), target)!.url, 'https://acme-batches.s3.eu-west-1.amazonaws.com/jobs/b/output/abc123/input.jsonl.out');
  t.is(adapter.results(adapter.state({ jobArn: ARN, status: 'Failed' }), target), undefined, 'no locations read yet: no results');
  t.is(adapter.retrieve(job('InProgress'), target).url, `https://bedrock.eu-west-1.amazonaws.com/model-invocation-job/${encodeURIComponent(ARN)}`);
});

test('records: modelOutput succeeded, error with its code as the status', (t) => {
  const out = [
    JSON.stringify({ recordId: '00000000001', modelInput: {}, modelOutput: { output: { message: { role: 'assistant', content: [{ text: 'x' }] } } } }),
    JSON.stringify({ recordId: '00000000000', modelInput: {}, error: { errorCode: 429, errorMessage: 'Too many tokens.' } }),
    JSON.stringify({ recordId: '00000000002', modelInput: {}, error: { errorCode: 'oops' } }),
  ].join('\n');
  const results = adapter.lineResults(Buffer.from(out), adapter.state({ jobArn: ARN }));
  t.like(results[0], { customId: 'r1', kind: 'succeeded' });
  t.like(results[1], { customId: 'r0', kind: 'errored', status: 429, error: { message: 'Too many tokens.', type: 'rate_limit_error' } });
  t.like(results[2], { customId: 'r2', kind: 'errored', status: 500 });
});
