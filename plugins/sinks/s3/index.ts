import { gzipSync } from 'node:zlib';
import { defineLogSink, type SinkRecord } from '../../../core/spec/index.js';
import { CREDENTIAL_PROPERTY, secretOf, sinkFailure } from '../../shared/sink-delivery.js';

const SINK = 's3';

export interface S3SinkParams {
  bucket: string;
  /** Prefix of the object keys (default `gateway-logs/`). */
  prefix?: string;
  /** Region (default `us-east-1`). */
  region?: string;
  /** An S3-compatible service's URL (MinIO, R2, Ceph, a test's fake); path-style addressing is then used unless `forcePathStyle: false`. */
  endpoint?: string;
  forcePathStyle?: boolean;
  /** Static keys (typically from `process.env`); never logged. Without them (nor `credential`) the AWS SDK's default chain applies. */
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** Or a credential stored in the vault with the fields `accessKeyId`, `secretAccessKey` (and `sessionToken`). */
  credential?: string;
}

type Client = { send(command: unknown): Promise<unknown>; destroy(): void };

/**
 * The object key of a batch: `<prefix>YYYY/MM/DD/HH/<first record's time>-<first id>-<count>.jsonl.gz`.
 * It is the same when the same batch is delivered again (after a failure whose upload did land),
 * so that delivery overwrites the object rather than adding one.
 */
export function objectKey(prefix: string, records: readonly SinkRecord[]): string {
  const first = records[0];
  const time = new Date(first.time);
  const pad = (value: number) => String(value).padStart(2, '0');
  const path = `${time.getUTCFullYear()}/${pad(time.getUTCMonth() + 1)}/${pad(time.getUTCDate())}/${pad(time.getUTCHours())}`;
  return `${prefix}${path}/${first.time.replace(/[:.]/g, '-')}-${first.id}-${records.length}.jsonl.gz`;
}

/**
 * S3-compatible object storage through the AWS SDK: one object per batch, the records as JSON
 * lines, gzip (`Content-Type: application/x-ndjson`, `Content-Encoding: gzip`). Readers deduplicate
 * by the `id` field: a batch replayed with other boundaries can repeat a record in another object.
 */
export const s3 = defineLogSink<S3SinkParams>(
  {
    id: SINK,
    version: '1.0.0',
    description: 'Writes each batch of log records to S3-compatible object storage as one gzipped JSON-lines object (AWS SDK).',
    params: {
      type: 'object',
      required: ['bucket'],
      properties: {
        bucket: { type: 'string', minLength: 3 },
        prefix: { type: 'string' },
        region: { type: 'string', minLength: 1 },
        endpoint: { type: 'string', pattern: '^https?://' },
        forcePathStyle: { type: 'boolean' },
        accessKeyId: { type: 'string', minLength: 1 },
        secretAccessKey: { type: 'string', minLength: 1, writeOnly: true },
        sessionToken: { type: 'string', minLength: 1, writeOnly: true },
        credential: CREDENTIAL_PROPERTY,
      },
    },
  },
  (params, dependencies) => {
    const given =
      params.accessKeyId !== undefined && params.secretAccessKey !== undefined
        ? { fields: { accessKeyId: params.accessKeyId, secretAccessKey: params.secretAccessKey, ...(params.sessionToken ? { sessionToken: params.sessionToken } : {}) } }
        : undefined;
    const secret = secretOf(SINK, given, params.credential, dependencies);
    const prefix = params.prefix ?? 'gateway-logs/';
    let client: Client | undefined;
    let PutObject: (new (input: Record<string, unknown>) => unknown) | undefined;
    const drop = async () => {
      client?.destroy();
      client = undefined;
    };
    return {
      async open() {
        await drop();
        const sdk = await import('@aws-sdk/client-s3');
        const keys = (await secret())?.fields;
        PutObject = sdk.PutObjectCommand as unknown as new (input: Record<string, unknown>) => unknown;
        client = new sdk.S3Client({
          region: params.region ?? 'us-east-1',
          ...(params.endpoint ? { endpoint: params.endpoint, forcePathStyle: params.forcePathStyle ?? true } : {}),
          ...(keys?.accessKeyId && keys.secretAccessKey
            ? { credentials: { accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey, ...(keys.sessionToken ? { sessionToken: keys.sessionToken } : {}) } }
            : {}),
          // Checksums only where S3 requires them: S3-compatible services differ on the newer ones.
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
          maxAttempts: 1,
        }) as unknown as Client;
      },
      async deliver(records) {
        if (!client || !PutObject) throw sinkFailure(SINK, new Error('not connected'));
        const body = gzipSync(`${records.map((record) => JSON.stringify(record)).join('\n')}\n`);
        try {
          await client.send(new PutObject({ Bucket: params.bucket, Key: objectKey(prefix, records), Body: body, ContentType: 'application/x-ndjson', ContentEncoding: 'gzip' }));
        } catch (error) {
          // The SDK's errors name the operation and S3's code; they carry no keys.
          const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
          throw sinkFailure(SINK, new Error(`PutObject failed${status ? ` (HTTP ${status})` : ''}: ${(error as Error).name}`));
        }
      },
      reset: drop,
      close: drop,
    };
  },
);
