import { defineLogSink, isRecord, type SinkRecord } from '../../../core/spec/index.js';
import { CREDENTIAL_PROPERTY, postBody, secretOf } from '../../shared/sink-delivery.js';

const SINK = 'otlp-logs';

export interface OtlpLogsSinkParams {
  /** The collector's OTLP/HTTP base (`http://collector:4318`, `/v1/logs` is added) or its full logs URL (ending in `/v1/logs`). */
  endpoint: string;
  /** Extra request headers (an `authorization`, a vendor's key header); never logged. */
  headers?: Record<string, string>;
  /** Or a credential stored in the vault: its fields are sent as headers (its `apiKey` as `authorization: Bearer …`). */
  credential?: string;
  /** `service.name` of the resource (default `llm-gateway`). */
  serviceName?: string;
}

type AttributeValue = string | number | boolean;

/** GenAI semantic conventions' `gen_ai.operation.name` for the gateway's operations (others keep their name). */
const GEN_AI_OPERATION: Readonly<Record<string, string>> = {
  chat: 'chat',
  messages: 'chat',
  responses: 'chat',
  completion: 'text_completion',
  embed: 'embeddings',
  generateContent: 'generate_content',
};

function value(value: AttributeValue): Record<string, unknown> {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

function attributes(values: Record<string, AttributeValue | null | undefined>): Array<{ key: string; value: Record<string, unknown> }> {
  const list: Array<{ key: string; value: Record<string, unknown> }> = [];
  for (const [key, item] of Object.entries(values)) if (item !== null && item !== undefined) list.push({ key, value: value(item) });
  return list;
}

/** OTLP `SeverityNumber`: INFO for answered requests, WARN for 4xx, ERROR for 5xx and failed streams. */
function severity(record: SinkRecord): { severityNumber: number; severityText: string } {
  if (record.status >= 500 || record.outcome === 'stream_error') return { severityNumber: 17, severityText: 'ERROR' };
  if (record.status >= 400) return { severityNumber: 13, severityText: 'WARN' };
  return { severityNumber: 9, severityText: 'INFO' };
}

/** One record as an OTLP log record: GenAI attributes, the gateway's own under `gateway.*`, the record's JSON as the body. */
export function otlpLogRecord(record: SinkRecord, observedNanos: bigint): Record<string, unknown> {
  const { request_body: requestBody, response_body: responseBody, ...rest } = record;
  const operation = GEN_AI_OPERATION[record.operation];
  return {
    timeUnixNano: String(BigInt(Date.parse(record.time)) * 1_000_000n),
    observedTimeUnixNano: String(observedNanos),
    ...severity(record),
    ...(operation ? { eventName: 'gen_ai.client.inference.operation.details' } : {}),
    ...(/^[0-9a-f]{32}$/.test(record.trace_id) ? { traceId: record.trace_id } : {}),
    body: { stringValue: JSON.stringify(rest) },
    attributes: attributes({
      'log.record.uid': record.id,
      'gen_ai.operation.name': operation ?? record.operation,
      'gen_ai.provider.name': record.provider,
      'gen_ai.request.model': record.model,
      'gen_ai.response.model': record.model,
      'gen_ai.usage.input_tokens': record.prompt_tokens,
      'gen_ai.usage.output_tokens': record.completion_tokens,
      'gen_ai.usage.cache_read.input_tokens': record.cached_tokens,
      'error.type': record.outcome === 'ok' ? undefined : (record.error_code ?? record.error_type ?? String(record.status)),
      'http.request.method': record.method,
      'http.response.status_code': record.status,
      'url.path': record.path,
      'user.id': record.end_user,
      'gateway.trace_id': record.trace_id,
      'gateway.outcome': record.outcome,
      'gateway.key_id': record.key_id,
      'gateway.latency_ms': record.latency_ms,
      'gateway.ttft_ms': record.ttft_ms,
      'gateway.cost_usd': record.cost_usd,
      'gateway.streaming': record.streaming,
      'gateway.request_body': requestBody,
      'gateway.response_body': responseBody,
    }),
  };
}

/** The OTLP/JSON `ExportLogsServiceRequest` of a batch. */
export function otlpLogsBody(records: readonly SinkRecord[], serviceName: string, now: number): string {
  const observed = BigInt(now) * 1_000_000n;
  return JSON.stringify({
    resourceLogs: [
      {
        resource: { attributes: attributes({ 'service.name': serviceName }) },
        scopeLogs: [{ scope: { name: 'llm-gateway' }, logRecords: records.map((record) => otlpLogRecord(record, observed)) }],
      },
    ],
  });
}

/**
 * OpenTelemetry logs over OTLP/HTTP with the JSON encoding (`POST <endpoint>/v1/logs`): one log
 * record per request with the GenAI semantic conventions' attributes, `log.record.uid` the
 * record's id (OTLP has no deduplication: a backend may use it).
 */
export const otlpLogs = defineLogSink<OtlpLogsSinkParams>(
  {
    id: SINK,
    version: '1.0.0',
    description: 'Sends each log record as an OpenTelemetry log record (OTLP/HTTP JSON) with GenAI semantic conventions attributes.',
    params: {
      type: 'object',
      required: ['endpoint'],
      properties: {
        endpoint: { type: 'string', pattern: '^https?://' },
        headers: { type: 'object', additionalProperties: { type: 'string' }, writeOnly: true },
        credential: CREDENTIAL_PROPERTY,
        serviceName: { type: 'string', minLength: 1 },
      },
    },
  },
  (params, dependencies) => {
    const url = params.endpoint.replace(/\/+$/, '').endsWith('/v1/logs') ? params.endpoint : `${params.endpoint.replace(/\/+$/, '')}/v1/logs`;
    const secret = secretOf(SINK, undefined, params.credential, dependencies);
    return {
      async deliver(records) {
        const stored = await secret();
        const headers: Record<string, string> = { 'content-type': 'application/json', ...params.headers };
        if (stored?.apiKey) headers.authorization = `Bearer ${stored.apiKey}`;
        for (const [name, field] of Object.entries(stored?.fields ?? {})) headers[name] = field;
        const answer = await postBody(dependencies.http, SINK, url, otlpLogsBody(records, params.serviceName ?? 'llm-gateway', dependencies.clock.now()), headers);
        // A partial success names the records the collector rejected: they are not retried (the collector will not take them).
        const parsed = answer.data ? safeJson(answer.data) : undefined;
        const rejected = isRecord(parsed) && isRecord(parsed.partialSuccess) ? Number(parsed.partialSuccess.rejectedLogRecords ?? 0) : 0;
        if (rejected > 0) dependencies.logger.warn({ sink: SINK, rejected }, 'the OTLP collector rejected log records');
      },
    };
  },
);

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
