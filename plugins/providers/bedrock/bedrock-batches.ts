import { createHash } from 'node:crypto';
import {
  type BatchAdapter,
  type BatchLineResult,
  type BatchStatus,
  errors,
  isRecord,
  type ProviderBatchState,
  type ProviderTarget,
  type UpstreamRequest,
} from '../../../core/spec/index.js';
import { type BucketLocation, type BucketUriRule, erroredLine, jsonLines, objectKey, parseBucketUri, PLAIN_PREFIX } from '../../shared/batch-storage.js';

/** The headers (or a stored credential's fields of the same names) naming where Bedrock batch jobs read and write. */
export const BEDROCK_BATCH_HEADERS = {
  /** `s3://bucket/prefix`: the caller's S3 location; each batch writes under `<prefix>/<batch id>/`. */
  s3Uri: 'x-gateway-cloud-c-batch-s3-uri',
  /** The IAM service role the job runs as (it must read and write that location). */
  roleArn: 'x-gateway-cloud-c-batch-role-arn',
} as const;

export interface BedrockBatchOptions {
  /** The request's AWS region. */
  readonly region: (headers: ProviderTarget['headers']) => string;
  /** Defaults when the request (or its credential) names none. */
  readonly s3Uri?: string;
  readonly roleArn?: string;
}

/** `GetModelInvocationJob`'s status in OpenAI's terms; the last five are ended. */
const STATUS_BY_JOB: Record<string, BatchStatus> = {
  Submitted: 'validating',
  Validating: 'validating',
  Scheduled: 'in_progress',
  InProgress: 'in_progress',
  Stopping: 'cancelling',
  Completed: 'completed',
  PartiallyCompleted: 'completed',
  Failed: 'failed',
  Stopped: 'cancelled',
  Expired: 'expired',
};
const ENDED = new Set(['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired']);

/** S3 bucket names (lower case, digits, dots, hyphens) and a prefix of characters that need no encoding. */
const S3_URI: BucketUriRule = {
  scheme: 's3',
  bucket: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
  prefix: PLAIN_PREFIX,
  expected: 'an S3 location such as "s3://my-bucket/batches" (a bucket name, and a prefix of letters, digits and . _ / -).',
};
const ROLE_ARN = /^arn:aws(-[a-z]+)*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
/** The input object's name; its output is `<name>.out` under `<output>/<job id>/`. */
const INPUT = 'input.jsonl';

const sha256 = (body: string | Uint8Array): string => createHash('sha256').update(body).digest('hex');
const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The record id of line `r<n>`: Bedrock documents 11-character alphanumeric ids, so the index is padded to 11 digits. */
const recordIdOf = (customId: string): string => customId.slice(1).padStart(11, '0');
const customIdOf = (recordId: string): string => (/^\d{11}$/.test(recordId) ? `r${Number(recordId)}` : recordId);

const parseS3Uri = (uri: string, param: string): BucketLocation => parseBucketUri(uri, param, S3_URI);

/** Where this request's batches are kept, and the role their jobs run as (400 `batch_storage_missing` when either is not named). */
function settings(target: ProviderTarget, options: BedrockBatchOptions): { location: BucketLocation; roleArn: string } {
  const uri = target.headers[BEDROCK_BATCH_HEADERS.s3Uri]?.trim() || options.s3Uri;
  const roleArn = target.headers[BEDROCK_BATCH_HEADERS.roleArn]?.trim() || options.roleArn;
  if (!uri || !roleArn) {
    throw errors.invalidRequest(
      `Bedrock batch inference reads its input from and writes its output to your S3 bucket: name it with ${BEDROCK_BATCH_HEADERS.s3Uri} (s3://bucket/prefix) and the job's service role with ${BEDROCK_BATCH_HEADERS.roleArn}, as headers or fields of the stored credential.`,
      { param: uri ? BEDROCK_BATCH_HEADERS.roleArn : BEDROCK_BATCH_HEADERS.s3Uri, code: 'batch_storage_missing' },
    );
  }
  if (!ROLE_ARN.test(roleArn)) throw errors.invalidRequest(`Invalid '${BEDROCK_BATCH_HEADERS.roleArn}': an IAM role ARN such as "arn:aws:iam::123456789012:role/BatchRole".`, { param: BEDROCK_BATCH_HEADERS.roleArn, code: 'invalid_value' });
  return { location: parseS3Uri(uri, BEDROCK_BATCH_HEADERS.s3Uri), roleArn };
}

/**
 * An object's URL on S3's REST API: virtual-hosted style in the request's region (path style for a
 * bucket with dots, which the wildcard certificate does not cover); with a custom host, path style
 * on that host. Keys hold only characters that need no encoding, so SigV4's canonical path is the path.
 */
function objectUrl(target: ProviderTarget, options: BedrockBatchOptions, bucket: string, key: string): string {
  if (target.customHost) return `${new URL(target.baseUrl).origin}/${bucket}/${key}`;
  const region = options.region(target.headers);
  return bucket.includes('.') ? `https://s3.${region}.amazonaws.com/${bucket}/${key}` : `https://${bucket}.s3.${region}.amazonaws.com/${key}`;
}

/** An S3 request: its payload hash in `x-amz-content-sha256`, which S3 requires and which tells the plugin's `auth` to sign for `s3`. */
function s3Request(method: 'GET' | 'PUT', url: string, body: string, contentType?: string): UpstreamRequest {
  return { method, url, headers: { ...(contentType ? { 'content-type': contentType } : {}), 'x-amz-content-sha256': sha256(body) }, ...(method === 'PUT' ? { body } : {}) };
}

/** Bedrock's control plane (`bedrock.<region>`), beside the runtime the target names (the custom host as it is). */
const controlUrl = (target: ProviderTarget): string => (target.customHost ? target.baseUrl : target.baseUrl.replace('://bedrock-runtime.', '://bedrock.'));

/** The job id: the last part of the job ARN (`arn:aws:bedrock:<region>:<account>:model-invocation-job/<id>`). */
const jobIdOf = (arn: string): string => arn.slice(arn.lastIndexOf('/') + 1);

/**
 * Bedrock batch inference (`CreateModelInvocationJob`, `GetModelInvocationJob`,
 * `StopModelInvocationJob` on the control plane) over the caller's S3 location: the mapped lines are
 * written as one JSONL object (`{recordId, modelInput}`, each `modelInput` the Converse body the
 * chat adapter built; the job's `modelInvocationType` is `Converse`) under `<prefix>/<batch id>/`,
 * and the job writes `<output>/<job id>/input.jsonl.out` (`{recordId, modelInput, modelOutput}` or
 * `{…, error: {errorCode, errorMessage}}`), read back through S3's REST API with SigV4. One model
 * per job.
 */
export function bedrockBatches(options: BedrockBatchOptions): BatchAdapter {
  return {
    endpoints: ['/v1/chat/completions'],
    mixedModels: false,
    // Bedrock's default quota of records per batch inference job.
    maxLines: 50_000,
    stage(lines, target, name) {
      if (!target.headers['x-gateway-cloud-c-secret-access-key']) {
        throw errors.invalidRequest('Bedrock batches write to S3, which takes SigV4 only: send the secret access key (x-gateway-cloud-c-secret-access-key, or a stored credential) rather than a Bedrock API key.', {
          param: 'x-gateway-cloud-c-secret-access-key',
          code: 'unsupported_signing',
        });
      }
      const { location } = settings(target, options);
      const body = lines.map((line) => `{"recordId":${JSON.stringify(recordIdOf(line.customId))},"modelInput":${String(line.upstream.body)}}`).join('\n');
      return s3Request('PUT', objectUrl(target, options, location.bucket, objectKey(location, name, INPUT)), `${body}\n`, 'application/jsonl');
    },
    create(lines, target, name) {
      const { location, roleArn } = settings(target, options);
      const job = {
        // Job names allow letters, digits and hyphens: the batch id's underscores become hyphens.
        jobName: name.replace(/_/g, '-'),
        clientRequestToken: name,
        roleArn,
        modelId: lines[0].request.model,
        modelInvocationType: 'Converse',
        inputDataConfig: { s3InputDataConfig: { s3InputFormat: 'JSONL', s3Uri: `s3://${location.bucket}/${objectKey(location, name, INPUT)}` } },
        outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${location.bucket}/${objectKey(location, name, 'output')}/` } },
        timeoutDurationInHours: 24,
      };
      return { method: 'POST', url: `${controlUrl(target)}/model-invocation-job`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(job) };
    },
    state(body): ProviderBatchState {
      if (!isRecord(body) || typeof body.jobArn !== 'string') throw new Error('not a model invocation job');
      // CreateModelInvocationJob answers with the ARN alone: the job is Submitted.
      const status = typeof body.status === 'string' ? body.status : 'Submitted';
      const output = isRecord(body.outputDataConfig) && isRecord(body.outputDataConfig.s3OutputDataConfig) ? body.outputDataConfig.s3OutputDataConfig.s3Uri : undefined;
      const input = isRecord(body.inputDataConfig) && isRecord(body.inputDataConfig.s3InputDataConfig) ? body.inputDataConfig.s3InputDataConfig.s3Uri : undefined;
      const total = count(body.totalRecordCount);
      const succeeded = count(body.successRecordCount);
      const failed = count(body.errorRecordCount);
      return {
        id: body.jobArn,
        status: STATUS_BY_JOB[status] ?? 'in_progress',
        ended: ENDED.has(status),
        counts: { succeeded, failed, processing: Math.max(0, total - count(body.processedRecordCount)) },
        ...(status === 'Failed' && typeof body.message === 'string' ? { failure: body.message } : {}),
        ...(typeof output === 'string' && typeof input === 'string' ? { handle: { output, input } } : {}),
      };
    },
    retrieve(batch, target) {
      return { method: 'GET', url: `${controlUrl(target)}/model-invocation-job/${encodeURIComponent(batch.id)}`, headers: {} };
    },
    cancel(batch, target) {
      return { method: 'POST', url: `${controlUrl(target)}/model-invocation-job/${encodeURIComponent(batch.id)}/stop`, headers: {} };
    },
    results(batch, target) {
      if (!batch.handle?.output || !batch.handle.input) return undefined;
      // The job's own locations, read on S3's host for the request's region (never a host the job names).
      const output = parseS3Uri(batch.handle.output, 'outputDataConfig');
      const inputName = batch.handle.input.slice(batch.handle.input.lastIndexOf('/') + 1);
      if (!/^[A-Za-z0-9._-]+$/.test(inputName)) throw new Error('unexpected input object name');
      return s3Request('GET', objectUrl(target, options, output.bucket, objectKey(output, jobIdOf(batch.id), `${inputName}.out`)), '');
    },
    lineResults(body): BatchLineResult[] {
      const results: BatchLineResult[] = [];
      for (const record of jsonLines(body)) {
        if (!isRecord(record) || typeof record.recordId !== 'string') continue;
        const customId = customIdOf(record.recordId);
        if (isRecord(record.modelOutput)) {
          results.push({ customId, kind: 'succeeded', body: record.modelOutput });
          continue;
        }
        const error = isRecord(record.error) ? record.error : {};
        const code = Number(error.errorCode);
        const status = Number.isInteger(code) && code >= 400 && code < 600 ? code : 500;
        const message = typeof error.errorMessage === 'string' && error.errorMessage ? error.errorMessage : 'The record failed.';
        results.push(erroredLine(customId, status, message));
      }
      return results;
    },
  };
}
