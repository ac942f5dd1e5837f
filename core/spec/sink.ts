import type { PluginDependencies } from './manifest.js';

// The log sink contract: where request log entries go besides the gateway's own log store. A sink
// plugin (plugins/sinks/<id>/) delivers batches of records to a system a team already runs; the
// core gives each configured sink a durable queue of its own (batches, retries, a spill directory
// replayed in order, metrics), so a plugin only says how one batch is delivered.

/**
 * One logged request as a sink receives it: the record the log store keeps and the admin API
 * answers (snake_case; `GET /admin/logs/{id}`), bodies redacted, masked and capped, or null unless
 * the sink asked for them. The fields below are those a plugin may rely on; a record carries the
 * others too (`guardrails`, `routing`, ...), and serialising it gives all of them.
 */
export interface SinkRecord {
  /**
   * The entry's id (UUIDv7, time-ordered): unique per logged request and the same on every
   * redelivery, so it is the idempotency key (a message id header or property, an event id).
   */
  readonly id: string;
  /** ISO 8601. */
  readonly time: string;
  readonly trace_id: string;
  readonly caller_type: string | null;
  readonly key_id: string | null;
  readonly key_name: string | null;
  readonly end_user: string | null;
  readonly provider: string | null;
  readonly model: string | null;
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly outcome: string;
  readonly error_type: string | null;
  readonly error_code: string | null;
  readonly error_message: string | null;
  readonly streaming: boolean;
  readonly latency_ms: number;
  readonly gateway_ms: number;
  readonly upstream_ms: number | null;
  readonly ttft_ms: number | null;
  readonly prompt_tokens: number | null;
  readonly completion_tokens: number | null;
  readonly cached_tokens: number | null;
  readonly reasoning_tokens: number | null;
  readonly total_tokens: number | null;
  readonly cost_usd: number | null;
  readonly cache_status: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  readonly request_body: string | null;
  readonly response_body: string | null;
}

/** What a sink plugin says about itself (listed in errors and metrics by its instance `name`). */
export interface LogSinkManifest {
  /** Lower-case, `[a-z0-9-]`: the plugin's id. */
  readonly id: string;
  readonly kind: 'log-sink';
  readonly version: string;
  readonly description: string;
  /** JSON Schema of the plugin's own params, checked at boot. */
  readonly params?: Record<string, unknown>;
}

/** The delivery settings every sink takes besides its plugin's own params (defaults in docs/logs.md#sinks). */
export interface LogSinkQueueOptions {
  /**
   * Names this sink: its metrics' `sink` label and its spill directory
   * (`<data dir>/log-sinks/<name>/`). `[a-z0-9_-]`, unique; default the plugin id.
   */
  readonly name?: string;
  /** Send the request and response bodies (redacted, masked, capped as stored). Default false (the plugin may default otherwise). */
  readonly bodies?: boolean;
  /** Records per delivery (default 500, or the plugin's cap when lower). */
  readonly batchSize?: number;
  /** Entries held in memory before they go to the spill directory (default 10 000). */
  readonly queueCapacity?: number;
  /** Delay before a sink that failed is tried again (default 1000 ms). */
  readonly retryMs?: number;
  /** A delivery not done by then counts as failed (default 30 000 ms). */
  readonly timeoutMs?: number;
  /** Cap of the spill directory; past it entries are dropped and counted (default 1 GiB). */
  readonly spillMaxBytes?: number;
}

/**
 * A sink once created. `deliver` resolves once the system has the whole batch (acknowledged,
 * confirmed, answered 2xx) and rejects otherwise; the queue then retries the batch, so the system
 * may see a record twice: it deduplicates by `record.id` where it can. A sink never throws a
 * secret in an error message.
 */
export interface LogSinkTarget {
  /** Connects (called before the first delivery and after a failure); optional. */
  open?(): Promise<void>;
  deliver(records: readonly SinkRecord[]): Promise<void>;
  /** Drops a connection that failed, so the next `open` starts afresh; optional. */
  reset?(): Promise<void>;
  close?(): Promise<void>;
  /** Most records one delivery may carry (an intake's cap); the queue's batches stay under it. */
  readonly maxBatch?: number;
}

/** What `logs.sinks` in `gateway.config.ts` lists: a plugin, its params and the queue settings. */
export interface LogSinkRegistration<Params = unknown> {
  readonly manifest: LogSinkManifest;
  readonly params: Params;
  readonly options: LogSinkQueueOptions;
  create(dependencies: PluginDependencies): LogSinkTarget;
}

/** A sink plugin's factory: `sink({ ...params, ...queue options })`. */
export type LogSinkFactory<Params> = (params: Params & LogSinkQueueOptions) => LogSinkRegistration<Params>;

const QUEUE_OPTION_NAMES = ['name', 'bodies', 'batchSize', 'queueCapacity', 'retryMs', 'timeoutMs', 'spillMaxBytes'] as const;

/**
 * Declares a sink plugin: its manifest, its default for `bodies`, and how it is built from its
 * params. The queue options are split off the params the factory is given.
 */
export function defineLogSink<Params extends object>(
  manifest: Omit<LogSinkManifest, 'kind'>,
  build: (params: Params, dependencies: PluginDependencies) => LogSinkTarget,
  defaults: Pick<LogSinkQueueOptions, 'bodies'> = {},
): LogSinkFactory<Params> {
  return (given) => {
    const params: Record<string, unknown> = {};
    const options: Record<string, unknown> = { ...defaults };
    for (const [key, value] of Object.entries(given ?? {})) {
      if ((QUEUE_OPTION_NAMES as readonly string[]).includes(key)) options[key] = value;
      else params[key] = value;
    }
    return {
      manifest: { ...manifest, kind: 'log-sink' },
      params: params as Params,
      options: options as LogSinkQueueOptions,
      create: (dependencies) => build(params as Params, dependencies),
    };
  };
}

/** A sink's failure, worded without secrets (a status, an error code, what was wrong with an answer). */
export class SinkError extends Error {
  constructor(
    readonly sink: string,
    message: string,
    readonly status?: number,
  ) {
    super(`${sink}: ${message}`);
    this.name = 'SinkError';
  }
}
