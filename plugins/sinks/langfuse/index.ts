import { defineLogSink, isRecord, type SinkRecord, SinkError } from '../../../core/spec/index.js';
import { CREDENTIAL_PROPERTY, groupsUnder, postBody, secretOf } from '../../shared/sink-delivery.js';

const SINK = 'langfuse';

/** The ingestion API takes batches of at most 3.5 MB: kept under, with room for the envelope. */
const MAX_BATCH_BYTES = 3_000_000;

export interface LangfuseSinkParams {
  /** Langfuse's base URL (default `https://cloud.langfuse.com`; a self-hosted one, a region). */
  baseUrl?: string;
  /** The project's public and secret keys (typically from `process.env`); the secret key is never logged. */
  publicKey?: string;
  secretKey?: string;
  /** Or a credential stored in the vault with the fields `publicKey` and `secretKey`. */
  credential?: string;
  /** Langfuse `environment` of the traces (default none). */
  environment?: string;
}

const parsed = (text: string | null): unknown => {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

const end = (record: SinkRecord): string => new Date(Date.parse(record.time) + record.latency_ms).toISOString();

/**
 * A record as two ingestion events: `trace-create` for the request's trace (the gateway's trace id,
 * so the requests of one trace group together) and `generation-create` for the model call (the
 * record's id). Event ids derive from the record's id, which Langfuse deduplicates by.
 */
export function langfuseEvents(record: SinkRecord, environment?: string): Array<Record<string, unknown>> {
  const input = parsed(record.request_body);
  const output = parsed(record.response_body);
  const metadata = { ...record.metadata, gateway_id: record.id, operation: record.operation, status: record.status, outcome: record.outcome, key_id: record.key_id, cache_status: record.cache_status };
  const failed = record.outcome !== 'ok';
  return [
    {
      id: `${record.id}-trace`,
      type: 'trace-create',
      timestamp: record.time,
      body: {
        id: record.trace_id,
        timestamp: record.time,
        name: `${record.method} ${record.path}`,
        ...(record.end_user ? { userId: record.end_user } : {}),
        ...(input !== undefined ? { input } : {}),
        ...(output !== undefined ? { output } : {}),
        ...(environment ? { environment } : {}),
        metadata,
        tags: ['llm-gateway', ...(record.provider ? [record.provider] : [])],
      },
    },
    {
      id: `${record.id}-generation`,
      type: 'generation-create',
      timestamp: record.time,
      body: {
        id: record.id,
        traceId: record.trace_id,
        name: record.operation,
        startTime: record.time,
        endTime: end(record),
        ...(record.ttft_ms !== null ? { completionStartTime: new Date(Date.parse(record.time) + record.ttft_ms).toISOString() } : {}),
        ...(record.model ? { model: record.model } : {}),
        ...(input !== undefined ? { input } : {}),
        ...(output !== undefined ? { output } : {}),
        ...(record.total_tokens !== null ? { usageDetails: { input: record.prompt_tokens ?? 0, output: record.completion_tokens ?? 0, total: record.total_tokens } } : {}),
        ...(record.cost_usd !== null ? { costDetails: { total: record.cost_usd } } : {}),
        ...(environment ? { environment } : {}),
        level: failed ? 'ERROR' : 'DEFAULT',
        ...(failed && record.error_message ? { statusMessage: record.error_message } : {}),
        metadata,
      },
    },
  ];
}

/**
 * Langfuse's ingestion API (`POST <baseUrl>/api/public/ingestion`, Basic auth with the project's
 * keys): a trace and a generation per request, bodies included by default (its input and output).
 * The answer is 207 with an error per event it refused: a server error or 429 among them fails the
 * batch (retried; the events it took are deduplicated by id), a 4xx is logged and not retried.
 */
export const langfuse = defineLogSink<LangfuseSinkParams>(
  {
    id: SINK,
    version: '1.0.0',
    description: 'Sends each log record to Langfuse as a trace and a generation through its ingestion API.',
    params: {
      type: 'object',
      properties: {
        baseUrl: { type: 'string', pattern: '^https?://' },
        publicKey: { type: 'string', minLength: 1 },
        secretKey: { type: 'string', minLength: 1, writeOnly: true },
        credential: CREDENTIAL_PROPERTY,
        environment: { type: 'string', minLength: 1 },
      },
    },
  },
  (params, dependencies) => {
    const given = params.publicKey !== undefined && params.secretKey !== undefined ? { fields: { publicKey: params.publicKey, secretKey: params.secretKey } } : undefined;
    if ((given === undefined) === (params.credential === undefined)) throw new Error('langfuse: give publicKey and secretKey, or credential (a stored credential id)');
    const secret = secretOf(SINK, given, params.credential, dependencies);
    const url = `${(params.baseUrl ?? 'https://cloud.langfuse.com').replace(/\/+$/, '')}/api/public/ingestion`;
    return {
      async deliver(records) {
        const keys = (await secret())?.fields;
        if (!keys?.publicKey || !keys.secretKey) throw new SinkError(SINK, 'the credential has no publicKey and secretKey fields');
        const authorization = `Basic ${Buffer.from(`${keys.publicKey}:${keys.secretKey}`).toString('base64')}`;
        const events = records.flatMap((record) => langfuseEvents(record, params.environment)).map((event) => JSON.stringify(event));
        for (const group of groupsUnder(events, MAX_BATCH_BYTES, Number.POSITIVE_INFINITY)) {
          const answer = await postBody(dependencies.http, SINK, url, `{"batch":[${group.join(',')}]}`, { 'content-type': 'application/json', authorization });
          const errors = refused(answer.data);
          if (errors.some((status) => status >= 500 || status === 429)) throw new SinkError(SINK, `refused ${errors.length} events (status ${errors.join(', ')})`);
          if (errors.length > 0) dependencies.logger.warn({ sink: SINK, refused: errors.length }, 'Langfuse refused events; they are not retried');
        }
      },
    };
  },
  { bodies: true },
);

/** The statuses of the events a 207 answer lists as errors. */
function refused(text: string): number[] {
  const answer = parsed(text);
  if (!isRecord(answer) || !Array.isArray(answer.errors)) return [];
  return answer.errors.map((error) => (isRecord(error) && typeof error.status === 'number' ? error.status : 500));
}
