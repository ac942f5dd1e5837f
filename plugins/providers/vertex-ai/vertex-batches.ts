import {
  type BatchAdapter,
  type BatchLineResult,
  type BatchStatus,
  errors,
  isRecord,
  type ProviderBatchState,
  type ProviderTarget,
} from '../../../core/spec/index.js';
import { type BucketLocation, type BucketUriRule, erroredLine, jsonLines, objectKey, parseBucketUri, PLAIN_PREFIX } from '../../shared/batch-storage.js';

/** The header (or a stored credential's field of that name) naming the Cloud Storage location of batch jobs. */
export const VERTEX_BATCH_GCS_HEADER = 'x-gateway-cloud-b-batch-gcs-uri';

/** `BatchPredictionJob.state` in OpenAI's terms; the last five are ended. */
const STATUS_BY_STATE: Record<string, BatchStatus> = {
  JOB_STATE_QUEUED: 'validating',
  JOB_STATE_PENDING: 'validating',
  JOB_STATE_RUNNING: 'in_progress',
  JOB_STATE_UPDATING: 'in_progress',
  JOB_STATE_PAUSED: 'in_progress',
  JOB_STATE_CANCELLING: 'cancelling',
  JOB_STATE_SUCCEEDED: 'completed',
  JOB_STATE_PARTIALLY_SUCCEEDED: 'completed',
  JOB_STATE_FAILED: 'failed',
  JOB_STATE_CANCELLED: 'cancelled',
  JOB_STATE_EXPIRED: 'expired',
};
const ENDED = new Set(['JOB_STATE_SUCCEEDED', 'JOB_STATE_PARTIALLY_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED', 'JOB_STATE_EXPIRED']);

/** Cloud Storage bucket names, and a prefix of characters that need no thought. */
const GCS_URI: BucketUriRule = {
  scheme: 'gs',
  bucket: /^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/,
  prefix: PLAIN_PREFIX,
  expected: 'a Cloud Storage location such as "gs://my-bucket/batches".',
};
/** A job's output directory (`prediction-<model>-<time>`, colons included): any name without `..` parts, percent-encoded when read. */
const GCS_JOB_URI: BucketUriRule = { ...GCS_URI, prefix: /^[^\s?#\\]*$/ };
const JOB_NAME = /^projects\/[\w-]+\/locations\/[\w-]+\/batchPredictionJobs\/[\w-]+$/;
/** The request label that carries a line's id through the job (its output lines echo the request). */
const LINE_LABEL = 'llm_gateway_line';
/** The file a Gemini batch prediction writes in its output directory. */
const PREDICTIONS = 'predictions.jsonl';

const count = (value: unknown): number => (typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : 0);

function location(target: ProviderTarget, fallback: string | undefined): BucketLocation {
  const uri = target.headers[VERTEX_BATCH_GCS_HEADER]?.trim() || fallback;
  if (!uri) {
    throw errors.invalidRequest(`Vertex AI batch prediction reads its input from and writes its output to Cloud Storage: name a location with ${VERTEX_BATCH_GCS_HEADER} (gs://bucket/prefix), as a header or a field of the stored credential.`, {
      param: VERTEX_BATCH_GCS_HEADER,
      code: 'batch_storage_missing',
    });
  }
  return parseBucketUri(uri, VERTEX_BATCH_GCS_HEADER, GCS_URI);
}

/** Cloud Storage's JSON API (its own host; with a custom host, that host's origin, where a test's fake serves it). */
const storageOrigin = (target: ProviderTarget): string => (target.customHost ? new URL(target.baseUrl).origin : 'https://storage.googleapis.com');

/** `…/projects/{project}/locations/{region}` and the model, from the URL the chat adapter built for a line. */
function parentOf(url: string): { parent: string; publisher: string; model: string } {
  const match = /^(.*\/projects\/[^/]+\/locations\/[^/]+)\/publishers\/([^/]+)\/models\/([^:/]+):/.exec(url);
  if (!match) throw new Error('unexpected model URL');
  return { parent: match[1], publisher: match[2], model: match[3] };
}

/** An output line's `status` as an HTTP status: the first status code it names, else 500. */
function statusOf(text: string): number {
  const code = /\b([45]\d\d)\b/.exec(text);
  return code ? Number(code[1]) : 500;
}

/**
 * Vertex AI batch prediction for Gemini models (`batchPredictionJobs` create, get, cancel) over
 * Cloud Storage: the mapped lines are uploaded (the JSON API's media upload, with the plugin's
 * Bearer token) as one JSONL object of `{"request": …}` lines, each the `generateContent` body the
 * chat adapter built, labelled with its line id; the job writes `predictions.jsonl` in its output
 * directory (`outputInfo.gcsOutputDirectory`), one `{request, response}` or `{request, status}` line
 * each, in any order. One model per job; Claude models are not batched here.
 */
export function vertexBatches(options: { gcsUri?: string } = {}): BatchAdapter {
  return {
    endpoints: ['/v1/chat/completions'],
    mixedModels: false,
    maxLines: 200_000,
    stage(lines, target, name) {
      const place = location(target, options.gcsUri);
      const { publisher } = parentOf(String(lines[0].upstream.url));
      if (publisher !== 'google') {
        throw errors.invalidRequest('Vertex AI batches are translated for Gemini models only; send Claude batches to the anthropic provider.', { param: 'input_file_id', code: 'unsupported_operation' });
      }
      const body = lines
        .map((line) => {
          const request = JSON.parse(String(line.upstream.body)) as Record<string, unknown>;
          const labels = isRecord(request.labels) ? request.labels : {};
          return JSON.stringify({ request: { ...request, labels: { ...labels, [LINE_LABEL]: line.customId } } });
        })
        .join('\n');
      const object = encodeURIComponent(objectKey(place, name, 'input.jsonl'));
      return { method: 'POST', url: `${storageOrigin(target)}/upload/storage/v1/b/${place.bucket}/o?uploadType=media&name=${object}`, headers: { 'content-type': 'application/jsonl' }, body: `${body}\n` };
    },
    create(lines, target, name) {
      const place = location(target, options.gcsUri);
      const { parent, model } = parentOf(String(lines[0].upstream.url));
      const job = {
        displayName: name,
        model: `publishers/google/models/${model}`,
        inputConfig: { instancesFormat: 'jsonl', gcsSource: { uris: [`gs://${place.bucket}/${objectKey(place, name, 'input.jsonl')}`] } },
        outputConfig: { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: `gs://${place.bucket}/${objectKey(place, name, 'output')}` } },
      };
      return { method: 'POST', url: `${parent}/batchPredictionJobs`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(job) };
    },
    state(body): ProviderBatchState {
      if (!isRecord(body) || typeof body.name !== 'string' || !JOB_NAME.test(body.name)) throw new Error('not a batch prediction job');
      const state = String(body.state);
      const stats = isRecord(body.completionStats) ? body.completionStats : {};
      const output = isRecord(body.outputInfo) ? body.outputInfo.gcsOutputDirectory : undefined;
      const failure = isRecord(body.error) && typeof body.error.message === 'string' ? body.error.message : undefined;
      return {
        id: body.name,
        status: STATUS_BY_STATE[state] ?? 'in_progress',
        ended: ENDED.has(state),
        counts: { succeeded: count(stats.successfulCount), failed: count(stats.failedCount), processing: count(stats.incompleteCount) },
        ...(state === 'JOB_STATE_FAILED' && failure ? { failure } : {}),
        ...(typeof output === 'string' ? { handle: { output } } : {}),
      };
    },
    retrieve(batch, target) {
      return { method: 'GET', url: `${target.baseUrl}/${batch.id}`, headers: {} };
    },
    cancel(batch, target) {
      return { method: 'POST', url: `${target.baseUrl}/${batch.id}:cancel`, headers: { 'content-type': 'application/json' }, body: '{}' };
    },
    results(batch, target) {
      if (!batch.handle?.output) return undefined;
      // The job's output directory, read on Cloud Storage's own host (never a host the job names).
      const output = parseBucketUri(batch.handle.output, 'outputInfo.gcsOutputDirectory', GCS_JOB_URI);
      return { method: 'GET', url: `${storageOrigin(target)}/storage/v1/b/${output.bucket}/o/${encodeURIComponent(objectKey(output, PREDICTIONS))}?alt=media`, headers: {} };
    },
    lineResults(body): BatchLineResult[] {
      const results: BatchLineResult[] = [];
      for (const line of jsonLines(body)) {
        if (!isRecord(line) || !isRecord(line.request) || !isRecord(line.request.labels)) continue;
        const customId = line.request.labels[LINE_LABEL];
        if (typeof customId !== 'string') continue;
        const status = typeof line.status === 'string' ? line.status : '';
        if (status === '' && isRecord(line.response)) {
          results.push({ customId, kind: 'succeeded', body: line.response });
          continue;
        }
        const http = statusOf(status);
        results.push(erroredLine(customId, http, status || 'The request failed.'));
      }
      return results;
    },
  };
}
