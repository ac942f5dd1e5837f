import { randomBytes } from 'node:crypto';
import type { LogEntry, LogSink } from '../logs/entry.js';
import type { GatewayContext } from '../pipeline/context.js';
import type { OtlpExporter, SpanRecord } from './otlp-exporter.js';
import { servedRequest } from '../routing/attempt.js';

interface TraceIds {
  traceId: string;
  /** The caller's span (from its `traceparent`), parent of the server span. */
  parentSpanId?: string;
  serverSpanId: string;
  clientSpanId: string;
  sampled: boolean;
  tracestate?: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const nanos = (epochMs: number) => BigInt(Math.round(epochMs * 1000)) * 1000n;

const numberField = (body: unknown, name: string): number | undefined => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'number' ? value : undefined;
};

/**
 * Per-request spans following the OpenTelemetry GenAI semantic conventions: a server span for the
 * gateway request and, when a provider was called, a client span `{operation} {model}` with the
 * `gen_ai.*` attributes. The client span's id goes to the provider in `traceparent`, so the
 * provider's own spans (if any) hang under it. A caller's `traceparent` is continued.
 * Without an exporter nothing is recorded, but a caller's `traceparent` is still passed on.
 */
export class Tracer {
  private readonly ids = new WeakMap<GatewayContext, TraceIds>();

  constructor(private readonly exporter?: OtlpExporter) {}

  private idsOf(context: GatewayContext): TraceIds {
    let ids = this.ids.get(context);
    if (!ids) {
      const incoming = TRACEPARENT.exec(context.incoming.headers.traceparent?.trim().toLowerCase() ?? '');
      const valid = incoming && incoming[1] !== '0'.repeat(32) && incoming[2] !== '0'.repeat(16);
      ids = {
        traceId: valid ? incoming[1] : hex(16),
        parentSpanId: valid ? incoming[2] : undefined,
        serverSpanId: hex(8),
        clientSpanId: hex(8),
        sampled: valid ? (Number.parseInt(incoming[3], 16) & 1) === 1 : true,
        tracestate: valid ? context.incoming.headers.tracestate : undefined,
      };
      this.ids.set(context, ids);
    }
    return ids;
  }

  /** Headers to add to the upstream request (`traceparent`, and the caller's `tracestate`). */
  readonly traceHeaders = (context: GatewayContext): Record<string, string> => {
    if (!this.exporter) {
      const incoming = context.incoming.headers.traceparent;
      if (!incoming) return {};
      const tracestate = context.incoming.headers.tracestate;
      return tracestate ? { traceparent: incoming, tracestate } : { traceparent: incoming };
    }
    const ids = this.idsOf(context);
    const headers: Record<string, string> = { traceparent: `00-${ids.traceId}-${ids.clientSpanId}-${ids.sampled ? '01' : '00'}` };
    if (ids.tracestate) headers.tracestate = ids.tracestate;
    return headers;
  };

  /** Builds the spans of a finished request from its log entry and context. */
  spansOf(entry: LogEntry, context: GatewayContext): SpanRecord[] {
    const ids = this.idsOf(context);
    if (!ids.sampled) return [];
    const origin = performance.timeOrigin;
    const start = origin + context.startedAt;
    const failed = entry.status >= 400 || entry.outcome !== 'ok';
    const errorType = entry.error?.type ?? (failed ? String(entry.status) : undefined);
    const genAi = {
      'gen_ai.operation.name': entry.operation,
      'gen_ai.provider.name': entry.provider,
      'gen_ai.request.model': servedRequest(context).model,
    };
    const spans: SpanRecord[] = [
      {
        traceId: ids.traceId,
        spanId: ids.serverSpanId,
        parentSpanId: ids.parentSpanId,
        name: `${entry.method} ${entry.path}`,
        kind: 2,
        startTimeUnixNano: nanos(start),
        endTimeUnixNano: nanos(start + entry.durationMs),
        attributes: {
          'http.request.method': entry.method,
          'url.path': entry.path,
          'http.response.status_code': entry.status,
          'gateway.trace_id': entry.traceId,
          'gateway.caller': entry.caller,
          'error.type': entry.status >= 500 ? errorType : undefined,
          ...genAi,
        },
        status: { code: entry.status >= 500 ? 2 : 0 },
      },
    ];
    const forward = context.forward;
    const upstreamUrl = context.transform?.upstreamRequest.url;
    if (forward && upstreamUrl) {
      const url = new URL(upstreamUrl);
      const upstreamStart = origin + forward.sentAt;
      const body = servedRequest(context).body;
      spans.push({
        traceId: ids.traceId,
        spanId: ids.clientSpanId,
        parentSpanId: ids.serverSpanId,
        name: servedRequest(context).model ? `${entry.operation} ${servedRequest(context).model}` : entry.operation,
        kind: 3,
        startTimeUnixNano: nanos(upstreamStart),
        endTimeUnixNano: nanos(upstreamStart + (entry.upstreamMs ?? 0)),
        attributes: {
          ...genAi,
          'gen_ai.response.model': entry.model,
          'gen_ai.request.max_tokens': numberField(body, 'max_completion_tokens') ?? numberField(body, 'max_tokens'),
          'gen_ai.request.temperature': numberField(body, 'temperature'),
          'gen_ai.request.top_p': numberField(body, 'top_p'),
          'gen_ai.usage.input_tokens': entry.usage?.promptTokens,
          'gen_ai.usage.output_tokens': entry.usage?.completionTokens,
          'server.address': url.hostname,
          'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
          'http.response.status_code': forward.status,
          'gateway.streaming': entry.streaming,
          'gateway.time_to_first_token_ms': entry.timeToFirstTokenMs,
          'error.type': failed ? errorType : undefined,
        },
        status: failed ? { code: 2, ...(entry.error ? { message: entry.error.message } : {}) } : { code: 0 },
      });
    }
    return spans;
  }

  /** The log sink that records the spans (present only with an exporter). */
  get sink(): LogSink | undefined {
    const exporter = this.exporter;
    if (!exporter) return undefined;
    return {
      write: (entry, _bodies, context) => {
        if (!context) return;
        for (const span of this.spansOf(entry, context)) exporter.add(span);
      },
    };
  }
}
