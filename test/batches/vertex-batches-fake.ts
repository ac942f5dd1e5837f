import type { ServerResponse } from 'node:http';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { batchFake, outcomeLines, parseJsonl, sendJson as json, sendObject } from './batch-fake.js';

/**
 * A loopback fake of Vertex AI batch prediction and the Cloud Storage objects it reads and writes,
 * following the documented lifecycle: the JSON API's media upload (`POST
 * /upload/storage/v1/b/{bucket}/o?uploadType=media&name=…`) and download (`GET
 * /storage/v1/b/{bucket}/o/{object}?alt=media`); `POST /v1/projects/{p}/locations/{r}/batchPredictionJobs`
 * (a `BatchPredictionJob`, `JOB_STATE_PENDING`), `GET /v1/{name}`, `POST /v1/{name}:cancel`
 * (`{}`; the job goes `JOB_STATE_CANCELLING`). The test moves a job; an end with outcomes writes
 * `<outputUriPrefix>/prediction-model-<time>/predictions.jsonl`, one `{status, processed_time,
 * request, response}` line per request that ran, in reverse order (the order is not the input's),
 * and names that directory in `outputInfo.gcsOutputDirectory`. Requires the Bearer token.
 */
export type VertexLineOutcome = { readonly text: string; readonly usage: { prompt: number; output: number } } | { readonly status: string };

export interface FakeVertexJob {
  name: string;
  body: Record<string, any>;
  state: string;
  requests: Array<Record<string, any>>;
  cancelRequested: boolean;
  output?: string;
  succeeded: number;
  failed: number;
}

export interface VertexBatchesFake extends Fake {
  readonly jobs: Map<string, FakeVertexJob>;
  readonly objects: Map<string, Buffer>;
  only(): FakeVertexJob;
  move(name: string, state: string, outcomes?: ReadonlyArray<VertexLineOutcome | undefined>): void;
}

const notFound = (response: ServerResponse) => json(response, 404, { error: { code: 404, message: 'Not found.', status: 'NOT_FOUND' } });
const gcsPath = (uri: string): string => uri.replace(/^gs:\/\//, '');

export async function startVertexBatchesFake(token: string): Promise<VertexBatchesFake> {
  const jobs = new Map<string, FakeVertexJob>();
  const objects = new Map<string, Buffer>();
  let created = 0;
  const fake = await startFake();
  const view = (job: FakeVertexJob) => ({
    name: job.name,
    displayName: job.body.displayName,
    model: job.body.model,
    inputConfig: job.body.inputConfig,
    outputConfig: job.body.outputConfig,
    state: job.state,
    createTime: '2026-11-29T00:00:00Z',
    ...(job.output ? { outputInfo: { gcsOutputDirectory: job.output } } : {}),
    ...(job.state === 'JOB_STATE_FAILED' ? { error: { code: 3, message: 'Invalid input: the model does not support batch prediction.' } } : {}),
    completionStats: { successfulCount: String(job.succeeded), failedCount: String(job.failed), incompleteCount: String(job.requests.length - job.succeeded - job.failed) },
  });
  const handler = (request: RecordedRequest, response: ServerResponse) => {
    if (request.headers.authorization !== `Bearer ${token}`) return json(response, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } });
    const url = new URL(request.url, 'http://fake');
    const upload = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
    if (request.method === 'POST' && upload && url.searchParams.get('uploadType') === 'media') {
      const name = url.searchParams.get('name')!;
      objects.set(`${upload[1]}/${name}`, request.body);
      return json(response, 200, { kind: 'storage#object', bucket: upload[1], name, size: String(request.body.length) });
    }
    const download = /^\/storage\/v1\/b\/([^/]+)\/o\/([^/]+)$/.exec(url.pathname);
    if (request.method === 'GET' && download && url.searchParams.get('alt') === 'media') {
      const object = objects.get(`${download[1]}/${decodeURIComponent(download[2])}`);
      if (!object) return notFound(response);
      sendObject(response, object);
      return;
    }
    const create = /^\/v1\/(projects\/[^/]+\/locations\/[^/]+)\/batchPredictionJobs$/.exec(url.pathname);
    if (request.method === 'POST' && create) {
      const body = request.json() as Record<string, any>;
      const input = objects.get(gcsPath(body.inputConfig.gcsSource.uris[0]));
      if (!input) return json(response, 400, { error: { code: 400, message: 'The input file does not exist.', status: 'INVALID_ARGUMENT' } });
      const job: FakeVertexJob = {
        name: `${create[1]}/batchPredictionJobs/${1000 + ++created}`,
        body,
        state: 'JOB_STATE_PENDING',
        requests: parseJsonl(input).map((line) => line.request),
        cancelRequested: false,
        succeeded: 0,
        failed: 0,
      };
      jobs.set(job.name, job);
      return json(response, 200, view(job));
    }
    const match = /^\/v1\/(projects\/[^/]+\/locations\/[^/]+\/batchPredictionJobs\/[^/:]+)(:cancel)?$/.exec(url.pathname);
    const job = match ? jobs.get(match[1]) : undefined;
    if (!job) return notFound(response);
    if (request.method === 'POST' && match![2]) {
      job.cancelRequested = true;
      job.state = 'JOB_STATE_CANCELLING';
      return json(response, 200, {});
    }
    if (request.method === 'GET' && !match![2]) return json(response, 200, view(job));
    return notFound(response);
  };
  fake.handle(handler);
  return batchFake(fake, jobs, 'job', {
    jobs,
    objects,
    move(name: string, state: string, outcomes?: ReadonlyArray<VertexLineOutcome | undefined>) {
      const job = jobs.get(name)!;
      job.state = state;
      if (!outcomes) return;
      const lines = outcomeLines(job.requests, outcomes, (request, outcome) => {
        if ('status' in outcome) {
          job.failed++;
          return { status: outcome.status, processed_time: '2026-11-29T00:05:00Z', request };
        }
        job.succeeded++;
        const response = {
          candidates: [{ content: { role: 'model', parts: [{ text: outcome.text }] }, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: outcome.usage.prompt, candidatesTokenCount: outcome.usage.output, totalTokenCount: outcome.usage.prompt + outcome.usage.output },
          modelVersion: job.body.model.split('/').pop(),
        };
        return { status: '', processed_time: '2026-11-29T00:05:00Z', request, response };
      });
      job.output = `${job.body.outputConfig.gcsDestination.outputUriPrefix}/prediction-model-2026-11-29T00:00:00.000000Z`;
      objects.set(`${gcsPath(job.output)}/predictions.jsonl`, Buffer.from(`${lines.reverse().join('\n')}\n`));
    },
  });
}
