import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { checkSigV4 } from '../../plugins/providers/bedrock/bedrock-fake.js';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { batchFake, outcomeLines, parseJsonl, sendJson, sendObject } from './batch-fake.js';

/**
 * A loopback fake of Bedrock batch inference and the S3 objects it reads and writes, following the
 * documented lifecycle: `PUT /{bucket}/{key}` and `GET /{bucket}/{key}` (S3's REST API, path
 * style, SigV4 for `s3` with `x-amz-content-sha256`), `POST /model-invocation-job` (answers the
 * `jobArn` alone), `GET /model-invocation-job/{jobArn}` (`status`: Submitted, Validating,
 * Scheduled, InProgress, Stopping, and the ends Completed, PartiallyCompleted, Failed, Stopped,
 * Expired, with the record counts), `POST /model-invocation-job/{jobArn}/stop`. The test moves a
 * job; an end with outcomes writes `<output>/<job id>/input.jsonl.out`, one `{recordId, modelInput,
 * modelOutput}` (a Converse answer) or `{recordId, modelInput, error: {errorCode, errorMessage}}`
 * per record that ran. Every request's signature is checked; problems are kept in `problems`.
 */
export type BedrockRecordOutcome = { readonly text: string; readonly usage: { input: number; output: number } } | { readonly error: { code: number; message: string } };

export interface FakeBedrockJob {
  arn: string;
  body: Record<string, any>;
  status: string;
  /** The input object's records, as the job read them. */
  records: Array<{ recordId: string; modelInput: Record<string, any> }>;
  stopRequested: boolean;
  ran: number;
  failed: number;
}

export interface BedrockBatchesFake extends Fake {
  readonly jobs: Map<string, FakeBedrockJob>;
  readonly objects: Map<string, Buffer>;
  /** Signature problems of the requests received (empty when every one was signed right). */
  readonly problems: string[];
  only(): FakeBedrockJob;
  /** Moves a job to a status; with outcomes (by record, in input order; undefined: did not run), writes its output object. */
  move(arn: string, status: string, outcomes?: ReadonlyArray<BedrockRecordOutcome | undefined>): void;
}

const ACCOUNT = '123456789012';

const json = (response: ServerResponse, status: number, value: unknown, errorType?: string) => sendJson(response, status, value, errorType ? { 'x-amzn-errortype': errorType } : {});

const s3Key = (uri: string): string => uri.replace(/^s3:\/\//, '');

export async function startBedrockBatchesFake(credentials: { accessKeyId: string; secretAccessKey: string }, region: string): Promise<BedrockBatchesFake> {
  const jobs = new Map<string, FakeBedrockJob>();
  const objects = new Map<string, Buffer>();
  const problems: string[] = [];
  let created = 0;
  const fake = await startFake();
  const jobView = (job: FakeBedrockJob) => ({
    jobArn: job.arn,
    jobName: job.body.jobName,
    modelId: job.body.modelId,
    roleArn: job.body.roleArn,
    status: job.status,
    ...(job.status === 'Failed' ? { message: 'The input file has fewer records than the job minimum.' } : {}),
    submitTime: '2026-11-29T00:00:00Z',
    inputDataConfig: job.body.inputDataConfig,
    outputDataConfig: job.body.outputDataConfig,
    modelInvocationType: job.body.modelInvocationType,
    timeoutDurationInHours: job.body.timeoutDurationInHours,
    totalRecordCount: job.records.length,
    processedRecordCount: job.ran + job.failed,
    successRecordCount: job.ran,
    errorRecordCount: job.failed,
  });
  const handler = (request: RecordedRequest, response: ServerResponse) => {
    const path = request.url.split('?')[0];
    if (path.startsWith('/model-invocation-job')) {
      problems.push(...checkSigV4(request, credentials, region).map((problem) => `${request.method} ${path}: ${problem}`));
      if (request.method === 'POST' && path === '/model-invocation-job') {
        const body = request.json() as Record<string, any>;
        const input = objects.get(s3Key(body.inputDataConfig.s3InputDataConfig.s3Uri));
        if (!input) return json(response, 400, { message: 'The input S3 object does not exist.' }, 'ValidationException');
        const arn = `arn:aws:bedrock:${region}:${ACCOUNT}:model-invocation-job/fakejob${++created}`;
        const records = parseJsonl(input);
        jobs.set(arn, { arn, body, status: 'Submitted', records, stopRequested: false, ran: 0, failed: 0 });
        return json(response, 200, { jobArn: arn });
      }
      const match = /^\/model-invocation-job\/([^/]+)(\/stop)?$/.exec(path);
      const job = match ? jobs.get(decodeURIComponent(match[1])) : undefined;
      if (!job) return json(response, 404, { message: 'Job not found.' }, 'ResourceNotFoundException');
      if (request.method === 'POST' && match![2]) {
        job.stopRequested = true;
        if (!['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired'].includes(job.status)) job.status = 'Stopping';
        return json(response, 200, {});
      }
      if (request.method === 'GET' && !match![2]) return json(response, 200, jobView(job));
      return json(response, 404, { message: 'Not found.' }, 'ResourceNotFoundException');
    }
    // S3, path style: /{bucket}/{key}
    problems.push(...checkSigV4(request, credentials, region, 's3').map((problem) => `${request.method} ${path}: ${problem}`));
    if (request.headers['x-amz-content-sha256'] !== createHash('sha256').update(request.body).digest('hex')) problems.push(`${request.method} ${path}: x-amz-content-sha256 is not the payload's`);
    const key = path.slice(1);
    if (request.method === 'PUT') {
      objects.set(key, request.body);
      response.writeHead(200, { etag: '"fake"' }).end();
      return;
    }
    const object = request.method === 'GET' ? objects.get(key) : undefined;
    if (!object) {
      response.writeHead(404, { 'content-type': 'application/xml' }).end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
      return;
    }
    sendObject(response, object);
  };
  fake.handle(handler);
  return batchFake(fake, jobs, 'job', {
    jobs,
    objects,
    problems,
    move(arn: string, status: string, outcomes?: ReadonlyArray<BedrockRecordOutcome | undefined>) {
      const job = jobs.get(arn)!;
      job.status = status;
      if (!outcomes) return;
      const lines = outcomeLines(job.records, outcomes, (record, outcome) => {
        if ('error' in outcome) {
          job.failed++;
          return { recordId: record.recordId, modelInput: record.modelInput, error: { errorCode: outcome.error.code, errorMessage: outcome.error.message } };
        }
        job.ran++;
        const modelOutput = {
          output: { message: { role: 'assistant', content: [{ text: outcome.text }] } },
          stopReason: 'end_turn',
          usage: { inputTokens: outcome.usage.input, outputTokens: outcome.usage.output, totalTokens: outcome.usage.input + outcome.usage.output },
          metrics: { latencyMs: 120 },
        };
        return { recordId: record.recordId, modelInput: record.modelInput, modelOutput };
      });
      const output = s3Key(job.body.outputDataConfig.s3OutputDataConfig.s3Uri).replace(/\/$/, '');
      const inputName = job.body.inputDataConfig.s3InputDataConfig.s3Uri.split('/').pop();
      objects.set(`${output}/${arn.split('/').pop()}/${inputName}.out`, Buffer.from(`${lines.join('\n')}\n`));
    },
  });
}
