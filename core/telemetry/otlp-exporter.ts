import { requireDependency } from '../require.js';
import type * as Undici from 'undici';

/** undici's whole index (its `request`), loaded by the first export: the forward path loads only its Pool (core/http/upstream.ts). */
let undiciRequest: typeof Undici.request | undefined;
const requestFunction = () => (undiciRequest ??= (requireDependency('undici') as typeof Undici).request);

export type AttributeValue = string | number | boolean | readonly string[];

/** One finished span, in the shape the exporter sends (ids in hex, times in ns since the epoch). */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 2 server, 3 client (OTLP `SpanKind`). */
  kind: 2 | 3;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Record<string, AttributeValue | undefined>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: 0 | 1 | 2; message?: string };
}

function attributeValue(value: AttributeValue): Record<string, unknown> {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { arrayValue: { values: value.map((item) => ({ stringValue: item })) } };
}

const attributes = (values: Record<string, AttributeValue | undefined>) =>
  Object.entries(values)
    .filter((entry): entry is [string, AttributeValue] => entry[1] !== undefined)
    .map(([key, value]) => ({ key, value: attributeValue(value) }));

/** The OTLP/JSON body (`ExportTraceServiceRequest`) for a batch of spans. */
export function otlpBody(spans: readonly SpanRecord[], serviceName: string, version: string): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: attributes({ 'service.name': serviceName, 'service.version': version }) },
        scopeSpans: [
          {
            scope: { name: 'llm-gateway', version },
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              startTimeUnixNano: String(span.startTimeUnixNano),
              endTimeUnixNano: String(span.endTimeUnixNano),
              attributes: attributes(span.attributes),
              status: span.status,
            })),
          },
        ],
      },
    ],
  });
}

/**
 * Sends spans over OTLP/HTTP with the JSON encoding, in batches (every second or every 512 spans),
 * off the request path. A failed export is counted and its spans dropped: traces are best effort,
 * unlike request logs. Hand-written (about 100 lines) rather than the OpenTelemetry SDK, which
 * would add a dozen packages to reach the same bytes on the wire.
 */
export class OtlpExporter {
  private buffer: SpanRecord[] = [];
  private timer?: NodeJS.Timeout;
  private inFlight = new Set<Promise<void>>();
  readonly totals = { exported: 0, failed: 0 };

  constructor(
    private readonly options: { url: string; headers: Record<string, string>; serviceName: string; version: string; onError?: (error: unknown) => void },
  ) {}

  add(span: SpanRecord): void {
    this.buffer.push(span);
    if (this.buffer.length >= 512) this.send();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.send(), 1000);
      this.timer.unref();
    }
  }

  private send(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer.length === 0) return;
    const spans = this.buffer;
    this.buffer = [];
    const sending = this.post(spans).finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  private async post(spans: SpanRecord[]): Promise<void> {
    try {
      const answer = await requestFunction()(this.options.url, {
        method: 'POST',
        headers: { ...this.options.headers, 'content-type': 'application/json' },
        body: otlpBody(spans, this.options.serviceName, this.options.version),
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      await answer.body.dump();
      if (answer.statusCode >= 300) throw new Error(`OTLP endpoint answered ${answer.statusCode}`);
      this.totals.exported += spans.length;
    } catch (error) {
      this.totals.failed += spans.length;
      this.options.onError?.(error);
    }
  }

  /** Sends what is buffered and waits for every export in flight. */
  async flush(): Promise<void> {
    this.send();
    await Promise.all([...this.inFlight]);
  }
}
