import type * as PromClient from 'prom-client';
import type { LogEntry, LogSink } from '../logs/entry.js';
import type { LogQueueObserver } from '../logs/queue.js';
import type { CacheObserver } from '../cache/response-cache.js';
import { requireDependency } from '../require.js';
import { type CounterSeries, type HistogramSeries, SeriesCounter, SeriesHistogram } from './series.js';

// prom-client's classes from their own modules. Its index also loads the Pushgateway and the
// default process metrics, whose CPU counter loads @opentelemetry/api for exemplars: 88 modules and
// 15–25 ms of start-up on the 2-core bench machine, against 7 modules and 2 ms for these. The
// process metrics are loaded later ({@link GatewayMetrics.processMetrics}). The version is pinned
// exactly; a test checks that these are the classes the index exports.
const Registry = requireDependency('prom-client/lib/registry') as typeof PromClient.Registry;
const Counter = requireDependency('prom-client/lib/counter') as typeof PromClient.Counter;
const Gauge = requireDependency('prom-client/lib/gauge') as typeof PromClient.Gauge;
const Histogram = requireDependency('prom-client/lib/histogram') as typeof PromClient.Histogram;
type Registry = PromClient.Registry;
type Histogram<Label extends string = string> = PromClient.Histogram<Label>;

/** The JSON-RPC methods MCP metrics are labelled with; any other is `other`, so callers cannot grow the registry. */
const KNOWN_MCP_METHODS = new Set(['initialize', 'ping', 'tools/list', 'tools/call', 'resources/list', 'resources/templates/list', 'resources/read', 'prompts/list', 'prompts/get', 'completion/complete', 'stream', 'session/delete', 'auth', 'parse', 'unauthenticated']);
type Counter<Label extends string = string> = PromClient.Counter<Label>;

/** How long after the metrics are made the process metrics are loaded, unless a scrape comes first. */
export const PROCESS_METRICS_DELAY_MS = 1_000;

/** Distinct `model` label values kept; more are reported as `other`, so the registry cannot grow without bound. */
export const MAX_MODEL_LABELS = 500;

/**
 * Distinct `origin` label values of the upstream pool gauge; more are reported as `other`, so that
 * custom hosts (callers choose them) cannot grow the registry without bound.
 */
export const MAX_ORIGIN_LABELS = 100;

/** Seconds; from sub-millisecond gateway overhead to long generations. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** What the metrics read on each scrape. */
export interface MetricsSources {
  /** Log queue state. */
  logQueue?: () => { depth: number; spillBytes: number; storeUp: boolean };
  /** Upstream connection pools. */
  upstreamPools?: () => Array<{ origin: string; connected: number; pending: number; running: number }>;
  /** Circuit breakers of route targets (by their state key). */
  breakers?: () => Array<{ target: string; state: 'closed' | 'open' | 'half_open' }>;
}

/** Distinct `target` label values of the routing metrics; more are reported as `other`. */
export const MAX_TARGET_LABELS = 200;

const BREAKER_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

/**
 * The series one (provider, model, operation) updates per request, found once and kept. Each is
 * created on first use, so that a series appears in the exposition once it has a value, as
 * prom-client's own did (no cost series for unpriced models, no upstream time for cache hits).
 */
class RequestSeries {
  /** `gateway_requests_total` by status. */
  readonly byStatus = new Map<number, CounterSeries>();
  private readonly made = new Map<string, CounterSeries | HistogramSeries>();

  constructor(
    private readonly metrics: { requests: SeriesCounter; tokens: SeriesCounter; cost: SeriesCounter; gatewayDuration: SeriesHistogram; upstreamDuration: SeriesHistogram; timeToFirstToken: SeriesHistogram },
    private readonly provider: string,
    private readonly model: string,
    private readonly operation: string,
  ) {}

  requests(status: number): CounterSeries {
    let series = this.byStatus.get(status);
    if (series === undefined) {
      series = this.metrics.requests.child({ provider: this.provider, model: this.model, operation: this.operation, status: String(status) });
      this.byStatus.set(status, series);
    }
    return series;
  }

  /** `gateway_tokens_total` of one type. */
  tokens(type: 'prompt' | 'completion' | 'cached' | 'reasoning'): CounterSeries {
    return this.once(type, () => this.metrics.tokens.child({ provider: this.provider, model: this.model, type })) as CounterSeries;
  }

  cost(): CounterSeries {
    return this.once('cost', () => this.metrics.cost.child({ provider: this.provider, model: this.model })) as CounterSeries;
  }

  duration(which: 'gatewayDuration' | 'upstreamDuration' | 'timeToFirstToken'): HistogramSeries {
    return this.once(which, () => this.metrics[which].child({ provider: this.provider, operation: this.operation })) as HistogramSeries;
  }

  private once(name: string, make: () => CounterSeries | HistogramSeries): CounterSeries | HistogramSeries {
    let series = this.made.get(name);
    if (series === undefined) this.made.set(name, (series = make()));
    return series;
  }
}

/**
 * The gateway's Prometheus metrics, on a registry of its own (one per gateway, so that several in
 * one process do not mix). Request metrics are fed from the log entry by {@link sink}; the log
 * queue reports through {@link logQueueObserver}; gauges are read on scrape.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  // The request metrics (fed per request) are series metrics (./series.ts), updated through
  // series found once per provider, model and operation; the rest are prom-client's own.
  private readonly requests: SeriesCounter;
  private readonly gatewayDuration: SeriesHistogram;
  private readonly upstreamDuration: SeriesHistogram;
  private readonly timeToFirstToken: SeriesHistogram;
  private readonly tokens: SeriesCounter;
  private readonly cost: SeriesCounter;
  private readonly guardrailVerdicts: SeriesCounter;
  private readonly guardrailDuration: SeriesHistogram;
  private readonly guardrailFailures: SeriesCounter;
  /** provider → model → operation → its series. */
  private readonly requestSeries = new Map<string, Map<string, Map<string, RequestSeries>>>();
  private readonly logEntries: Counter<'result'>;
  private readonly logDropped: Counter<'reason'>;
  private readonly routeAttempts: Counter<'target' | 'provider' | 'status'>;
  private readonly routeFallbacks: Counter<'target'>;
  private readonly routeRetries: Counter<'target'>;
  private readonly cacheHits: Counter<'operation' | 'kind'>;
  private readonly cacheMisses: Counter<'operation'>;
  private readonly cacheSaved: Counter<'provider' | 'model'>;
  private readonly cacheStores: Counter<'result'>;
  private readonly cacheEvictions: Counter;
  private readonly mcpRequests: Counter<'server' | 'method' | 'tool' | 'outcome'>;
  private readonly mcpDuration: Histogram<'server' | 'tool'>;

  constructor(sources: MetricsSources = {}) {
    const registers = [this.registry];
    setTimeout(() => this.processMetrics(), PROCESS_METRICS_DELAY_MS).unref();
    this.requests = new SeriesCounter({
      name: 'gateway_requests_total',
      help: 'Requests answered, by provider, model, operation and HTTP status.',
      labelNames: ['provider', 'model', 'operation', 'status'],
      registers,
    });
    const histogram = (name: string, help: string) =>
      new SeriesHistogram({ name, help, labelNames: ['provider', 'operation'], buckets: LATENCY_BUCKETS, registers });
    this.gatewayDuration = histogram('gateway_overhead_seconds', 'Time spent in the gateway itself (total minus upstream).');
    this.upstreamDuration = histogram('gateway_upstream_duration_seconds', 'Time from sending the upstream request to the end of its body.');
    this.timeToFirstToken = histogram('gateway_time_to_first_token_seconds', 'Streams: time from the request to the first content sent.');
    this.tokens = new SeriesCounter({
      name: 'gateway_tokens_total',
      help: 'Tokens reported by providers, by type (prompt, completion, cached, reasoning).',
      labelNames: ['provider', 'model', 'type'],
      registers,
    });
    this.cost = new SeriesCounter({ name: 'gateway_cost_usd_total', help: 'Priced cost of requests in USD.', labelNames: ['provider', 'model'], registers });
    this.guardrailVerdicts = new SeriesCounter({
      name: 'gateway_guardrail_verdicts_total',
      help: 'Guardrail verdicts, by guardrail, side (input, output) and action.',
      labelNames: ['guardrail', 'side', 'action'],
      registers,
    });
    this.guardrailDuration = new SeriesHistogram({
      name: 'gateway_guardrail_duration_seconds',
      help: "Time a guardrail took to judge, by guardrail and side (a service's latency for the ones that call one; a stream's window checks summed).",
      labelNames: ['guardrail', 'side'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.guardrailFailures = new SeriesCounter({
      name: 'gateway_guardrail_failures_total',
      help: 'Guardrails that errored or timed out, by guardrail, side, failure (error, timeout) and the fail mode that decided (fail-closed, fail-open).',
      labelNames: ['guardrail', 'side', 'failure', 'on_error'],
      registers,
    });
    this.logEntries = new Counter({
      name: 'gateway_log_entries_total',
      help: 'Log entries by what happened to them: written (to the store), spilled (to the spill file), replayed (from it).',
      labelNames: ['result'],
      registers,
    });
    for (const result of ['written', 'spilled', 'replayed']) this.logEntries.inc({ result }, 0);
    this.logDropped = new Counter({
      name: 'gateway_log_entries_dropped_total',
      help: 'Log entries lost: spill file full (spill_full), not writable (spill_unwritable), or a line cut by a crash (spill_unreadable).',
      labelNames: ['reason'],
      registers,
    });
    this.logDropped.inc({ reason: 'spill_full' }, 0);
    logQueueGauges(sources.logQueue, registers);
    this.routeAttempts = new Counter({
      name: 'gateway_route_attempts_total',
      help: 'Upstream attempts of routed requests, by target, provider and status (502/504 when nothing was answered).',
      labelNames: ['target', 'provider', 'status'],
      registers,
    });
    this.routeFallbacks = new Counter({ name: 'gateway_route_fallbacks_total', help: 'Attempts that moved a routed request to another target, by the target moved to.', labelNames: ['target'], registers });
    this.routeRetries = new Counter({ name: 'gateway_route_retries_total', help: 'Attempts that retried the same target of a routed request.', labelNames: ['target'], registers });
    this.cacheHits = new Counter({ name: 'gateway_cache_hits_total', help: 'Requests answered from the response cache, by operation and kind (exact, semantic).', labelNames: ['operation', 'kind'], registers });
    this.cacheMisses = new Counter({ name: 'gateway_cache_misses_total', help: 'Cacheable requests the response cache could not answer (sent upstream).', labelNames: ['operation'], registers });
    this.cacheSaved = new Counter({
      name: 'gateway_cache_saved_usd_total',
      help: 'What the answers served from the cache cost when they were made (USD), by the provider and model that made them.',
      labelNames: ['provider', 'model'],
      registers,
    });
    this.cacheStores = new Counter({ name: 'gateway_cache_stores_total', help: 'Answers offered to the cache: stored, too_large (over cache.maxEntryBytes), failed (store error or time-out).', labelNames: ['result'], registers });
    for (const result of ['stored', 'too_large', 'failed']) this.cacheStores.inc({ result }, 0);
    this.mcpRequests = new Counter({ name: 'gateway_mcp_requests_total', help: 'MCP requests by upstream server, JSON-RPC method, tool and outcome (ok or error).', labelNames: ['server', 'method', 'tool', 'outcome'], registers });
    this.mcpDuration = new Histogram({ name: 'gateway_mcp_tool_call_duration_seconds', help: 'MCP tools/call latency through the gateway, by upstream server and tool.', labelNames: ['server', 'tool'], buckets: LATENCY_BUCKETS, registers });
    this.cacheEvictions = new Counter({ name: 'gateway_cache_evictions_total', help: 'Entries the embedded cache evicted to stay under cache.maxBytes (expired ones included).', registers });
    routeBreakerGauge(sources.breakers, (target) => this.targetLabel(target), registers);
    upstreamPoolGauge(sources.upstreamPools, (origin) => this.originLabel(origin), registers);
  }

  /** Origin label values seen; past {@link MAX_ORIGIN_LABELS} new origins are counted as `other`. */
  private readonly origins = new Set<string>();

  /** Callers name custom hosts: cap the label's values. */
  private originLabel(origin: string): string {
    if (this.origins.has(origin)) return origin;
    if (this.origins.size >= MAX_ORIGIN_LABELS) return 'other';
    this.origins.add(origin);
    return origin;
  }

  /** Target label values seen; past {@link MAX_TARGET_LABELS} new ones are counted as `other`. */
  private readonly targets = new Set<string>();

  /** Inline routes name their own targets: cap the label's values. */
  private targetLabel(target: string): string {
    if (this.targets.has(target)) return target;
    if (this.targets.size >= MAX_TARGET_LABELS) return 'other';
    this.targets.add(target);
    return target;
  }

  /** Model label values seen; past {@link MAX_MODEL_LABELS} new names are counted as `other`. */
  private readonly models = new Set<string>();

  /** Authenticated callers still choose the model name they send: cap the label's values. */
  private modelLabel(model: string): string {
    if (this.models.has(model)) return model;
    if (this.models.size >= MAX_MODEL_LABELS) return 'other';
    this.models.add(model);
    return model;
  }

  /** Feeds the request metrics from each log entry. */
  readonly sink: LogSink = {
    write: (entry: LogEntry) => {
      // A batch's entry is written at each state: counted once, when it ends.
      if (entry.progress) return;
      if (entry.operation === 'mcp') return this.countMcp(entry);
      // Requests that did not pass auth name any provider and model they like: keep those out of
      // the label values, or anyone could grow the registry without a key.
      const passed = entry.callerType !== undefined;
      const provider = passed ? (entry.provider ?? '') : '';
      const model = passed ? this.modelLabel(entry.model ?? '') : '';
      const operation = entry.operation;
      const series = this.seriesOf(provider, model, operation);
      series.requests(entry.status).inc();
      series.duration('gatewayDuration').observe(entry.gatewayMs / 1000);
      if (entry.upstreamMs !== undefined) series.duration('upstreamDuration').observe(entry.upstreamMs / 1000);
      if (entry.timeToFirstTokenMs !== undefined) series.duration('timeToFirstToken').observe(entry.timeToFirstTokenMs / 1000);
      const usage = entry.usage;
      if (usage) {
        series.tokens('prompt').inc(usage.promptTokens);
        series.tokens('completion').inc(usage.completionTokens);
        if (usage.cachedTokens) series.tokens('cached').inc(usage.cachedTokens);
        if (usage.reasoningTokens) series.tokens('reasoning').inc(usage.reasoningTokens);
      }
      if (entry.costUsd) series.cost().inc(entry.costUsd);
      for (const verdict of entry.guardrails) {
        this.guardrailVerdicts.child({ guardrail: verdict.guardrail, side: verdict.side, action: verdict.action }).inc();
        this.guardrailDuration.child({ guardrail: verdict.guardrail, side: verdict.side }).observe(verdict.ms / 1000);
        if (verdict.failure) this.guardrailFailures.child({ guardrail: verdict.guardrail, side: verdict.side, failure: verdict.failure, on_error: verdict.onError ?? 'fail-closed' }).inc();
      }
      if (entry.attempts) this.countAttempts(entry.attempts);
      if (entry.cache) this.countCache(entry.cache, operation, provider, model);
    },
  };

  /** An MCP request: calls and errors per server, method and tool, latency per server and tool (names come from the catalogue, never from the caller). */
  private countMcp(entry: LogEntry): void {
    const server = entry.mcp?.server ?? '';
    const tool = entry.mcp?.tool ?? '';
    const method = entry.callerType === undefined ? 'unauthenticated' : (entry.mcp?.method ?? '');
    this.mcpRequests.inc({ server, method: KNOWN_MCP_METHODS.has(method) ? method : 'other', tool, outcome: entry.outcome });
    if (entry.mcp?.method === 'tools/call') this.mcpDuration.observe({ server, tool }, entry.durationMs / 1000);
  }

  private get requestMetrics(): ConstructorParameters<typeof RequestSeries>[0] {
    return { requests: this.requests, tokens: this.tokens, cost: this.cost, gatewayDuration: this.gatewayDuration, upstreamDuration: this.upstreamDuration, timeToFirstToken: this.timeToFirstToken };
  }

  /** The series of one provider, model and operation (created on first use). */
  private seriesOf(provider: string, model: string, operation: string): RequestSeries {
    let byModel = this.requestSeries.get(provider);
    if (byModel === undefined) this.requestSeries.set(provider, (byModel = new Map()));
    let byOperation = byModel.get(model);
    if (byOperation === undefined) byModel.set(model, (byOperation = new Map()));
    let series = byOperation.get(operation);
    if (series === undefined) byOperation.set(operation, (series = new RequestSeries(this.requestMetrics, provider, model, operation)));
    return series;
  }

  /** A cache hit (and what it saved) or miss; bypasses and refreshes are neither. */
  private countCache(cache: NonNullable<LogEntry['cache']>, operation: string, provider: string, model: string): void {
    if (cache.status === 'MISS') this.cacheMisses.inc({ operation });
    if (cache.status !== 'HIT' && cache.status !== 'SEMANTIC-HIT') return;
    this.cacheHits.inc({ operation, kind: cache.status === 'HIT' ? 'exact' : 'semantic' });
    if (cache.savedUsd) this.cacheSaved.inc({ provider, model }, cache.savedUsd);
  }

  /** Counts what the response cache's store does. */
  readonly cacheObserver: CacheObserver = {
    stored: (result) => this.cacheStores.inc({ result }),
    evicted: (count) => this.cacheEvictions.inc(count),
  };

  /** Attempts, and among them retries (same target again) and fallbacks (another target). */
  private countAttempts(attempts: NonNullable<LogEntry['attempts']>): void {
    attempts.forEach((attempt, index) => {
      const target = this.targetLabel(attempt.target);
      this.routeAttempts.inc({ target, provider: attempt.provider, status: String(attempt.status) });
      if (index === 0) return;
      if (attempts[index - 1].target === attempt.target) this.routeRetries.inc({ target });
      else this.routeFallbacks.inc({ target });
    });
  }

  /** Counts what the log queue does with entries. */
  readonly logQueueObserver: LogQueueObserver = {
    written: (count) => this.logEntries.inc({ result: 'written' }, count),
    spilled: (count) => this.logEntries.inc({ result: 'spilled' }, count),
    replayed: (count) => this.logEntries.inc({ result: 'replayed' }, count),
    dropped: (count, reason) => this.logDropped.inc({ reason }, count),
  };

  private renderer = (): Promise<string> => this.registry.metrics();
  private processMetricsLoaded = false;

  /**
   * prom-client's default metrics (`gateway_process_*`: CPU, memory, event-loop lag, GC, handles),
   * registered {@link PROCESS_METRICS_DELAY_MS} after the gateway is made or at the first scrape,
   * whichever comes first, rather than during start-up: they count from then.
   */
  processMetrics(): void {
    if (this.processMetricsLoaded) return;
    this.processMetricsLoaded = true;
    const collectDefaultMetrics = requireDependency('prom-client/lib/defaultMetrics') as typeof PromClient.collectDefaultMetrics;
    collectDefaultMetrics({ register: this.registry, prefix: 'gateway_process_' });
  }

  /** The Prometheus text exposition. */
  render(): Promise<string> {
    this.processMetrics();
    return this.renderer();
  }

  /** Renders with `render` instead (a worker of `GATEWAY_WORKERS`: every worker's metrics summed). */
  renderWith(render: () => Promise<string>): void {
    this.renderer = render;
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The log queue's gauges, read on scrape: entries waiting, spill file bytes, and whether the store is up. */
function logQueueGauges(queue: MetricsSources['logQueue'], registers: Registry[]): void {
  new Gauge({
    name: 'gateway_log_queue_depth',
    help: 'Log entries waiting in memory.',
    registers,
    collect() {
      if (queue) this.set(queue().depth);
    },
  });
  new Gauge({
    name: 'gateway_log_spill_bytes',
    help: 'Bytes in the spill file waiting for replay.',
    registers,
    collect() {
      if (queue) this.set(queue().spillBytes);
    },
  });
  new Gauge({
    name: 'gateway_log_store_up',
    help: '1 when the log store accepts writes.',
    registers,
    collect() {
      if (queue) this.set(queue().storeUp ? 1 : 0);
    },
  });
}

/** Each route target's circuit breaker state, read on scrape. */
function routeBreakerGauge(breakers: MetricsSources['breakers'], targetLabel: (target: string) => string, registers: Registry[]): void {
  new Gauge({
    name: 'gateway_route_breaker_state',
    help: 'Circuit breaker of each route target: 0 closed, 1 half-open, 2 open.',
    labelNames: ['target'],
    registers,
    collect() {
      this.reset();
      for (const breaker of breakers?.() ?? []) this.set({ target: targetLabel(breaker.target) }, BREAKER_VALUE[breaker.state]);
    },
  });
}

/** Upstream pool usage per origin, read on scrape. */
function upstreamPoolGauge(pools: MetricsSources['upstreamPools'], originLabel: (origin: string) => string, registers: Registry[]): void {
  new Gauge({
    name: 'gateway_upstream_connections',
    help: 'Upstream pool usage per origin: connected sockets, running and pending requests.',
    labelNames: ['origin', 'state'],
    registers,
    collect() {
      this.reset();
      for (const pool of pools?.() ?? []) {
        // A custom host has a pool of its own (guarded); both count for the origin.
        const origin = originLabel(pool.origin.replace(/^guarded:/, ''));
        this.inc({ origin, state: 'connected' }, pool.connected);
        this.inc({ origin, state: 'running' }, pool.running);
        this.inc({ origin, state: 'pending' }, pool.pending);
      }
    },
  });
}
