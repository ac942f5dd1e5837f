import { totalmem } from 'node:os';
import {
  BootError,
  type Caller,
  type GuardrailFactory,
  type GuardrailRegistration,
  type Hook,
  type PolicyDefinition,
  type PricingOptions,
  type ProviderRegistration,
  parseRoute,
  parseRouteCache,
  type Route,
  type RouteCache,
  type BreakerSettings,
  DEFAULT_BREAKER,
  DEFAULT_RETRY,
  type RetrySettings,
  type GroupRule,
  type JwtRule,
  type LogSinkRegistration,
} from '../core/spec/index.js';
import { type AuthConfig, type ResolvedAuth, resolveAuth } from './auth.js';
import { type ResolvedLogSink, resolveSinks } from './sinks.js';

export * from './auth.js';
export type { ResolvedLogSink } from './sinks.js';

/** Which custom hosts (`x-gateway-custom-host`) a caller may name. */
export interface CustomHostPolicy {
  /** Loopback addresses (127.0.0.0/8, ::1). Default true: local model servers are the common case. */
  allowLoopback?: boolean;
  /** Private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7). Default false. */
  allowPrivate?: boolean;
  /**
   * Extra CIDR ranges allowed even though private (e.g. `10.1.0.0/16`). Link-local, metadata and the
   * other special-purpose ranges of IANA's registries (documentation, benchmarking, multicast,
   * reserved, 6to4 and mapped forms of them) stay refused (see `core/http/custom-host.ts`).
   */
  allowCidrs?: string[];
}

/** Whether bodies are logged: always, never, or decided per request (caller, metadata). */
export type BodyLogging = boolean | ((request: { readonly caller?: Caller; readonly metadata: Readonly<Record<string, string>> }) => boolean);

/** Request log settings. Environment variables override them (named in docs/logs.md). */
export interface LogsConfig {
  /**
   * Store request and response bodies (redacted, capped). Default true. A function decides per
   * request, e.g. per virtual key: `(request) => request.caller?.type !== 'virtual-key' || request.caller.id !== 'vk_1'`.
   * `x-gateway-log-bodies: false` turns it off for one request either way.
   */
  bodies?: BodyLogging;
  /** Cap of each stored body in characters (default 32 768). */
  bodyMaxBytes?: number;
  /** Entries held in memory before overflowing to the spill file (default 10 000). */
  queueCapacity?: number;
  /** Records per store write (default 500). */
  batchSize?: number;
  /** Delay between attempts to reach a failed store (default 1000 ms). */
  retryMs?: number;
  /** Cap of the spill file; past it entries are dropped and counted (default 1 GiB). */
  spillMaxBytes?: number;
  /** SQLite retention: by age (default 30 days) and by size (default 1 GiB); 0 disables either. */
  retention?: { maxAgeDays?: number; maxBytes?: number };
  /** PostgreSQL schema for the log tables (default `public`). */
  postgresSchema?: string;
  /**
   * Index the stored bodies for the logs' free-text search (`q`; default true). The index costs the
   * log writer time per row with bodies (docs/logs.md#search); off, `q` is refused and the index is
   * dropped (turned on again, it is rebuilt from the stored bodies).
   */
  search?: boolean;
  /**
   * The SQLite log writer thread's nice value, 0–19 (default 0: the process's priority; Linux only,
   * `GATEWAY_LOG_WRITER_NICE`). Above 0 the writer yields the CPU to the request thread when the
   * cores are all busy, and holds more entries in memory meanwhile (docs/logs.md).
   */
  writerNice?: number;
  /**
   * External sinks every entry goes to besides the store (docs/logs.md#sinks): sink plugins from
   * `plugins/sinks/` (`nats({ ... })`, `rabbitmq({ ... })`, `otlpLogs({ ... })`, ...), each with a
   * durable queue of its own (batches, retries, a spill directory replayed in order).
   */
  sinks?: LogSinkRegistration[];
}

/** The Responses API's settings: built-in tools and the stored responses' retention (docs/protocols.md). */
export interface ResponsesConfig {
  /**
   * A built-in tool (`web_search`, `file_search`, …) the chosen provider cannot run: `drop` (default)
   * sends the request without it and names it in the `x-gateway-dropped-tools` response header;
   * `refuse` answers 400 `unsupported_tool`.
   */
  builtInTools?: 'drop' | 'refuse';
  /** Stored responses (`store: true`) are deleted after this many days (default 30, as OpenAI; 0 keeps them). Env `GATEWAY_RESPONSES_RETENTION_DAYS` wins. */
  retentionDays?: number;
}

/** Bounds of the Realtime API's WebSocket sessions (`GET /v1/realtime`; docs/protocols.md#realtime). A value of 0 disables that bound. */
export interface RealtimeSettings {
  /** A session with no event either way for this long is closed (default 300 000 ms). */
  idleTimeoutMs?: number;
  /** A session is closed this long after it opened, whatever it is doing (default 1 800 000 ms: 30 minutes). */
  maxSessionMs?: number;
  /** Largest WebSocket message accepted from the client or the provider (default 16 MiB); a larger one closes the session (1009). */
  maxFrameBytes?: number;
  /** Bytes queued towards one side before the gateway stops reading the other (default 4 MiB): back-pressure both ways. */
  maxBufferedBytes?: number;
}

/** The configuration a `gateway.config.ts` declares. Every field but `providers` is optional. */
export interface GatewayConfig {
  providers: ProviderRegistration[];
  /**
   * Guardrail plugins to list at `GET /admin/plugins` beyond those the policies use: factories
   * (`pii`, listed without being configured) or configured instances (`pii({ ... })`).
   */
  guardrails?: Array<GuardrailRegistration | GuardrailFactory>;
  /** Named guardrail policies: ordered chains of guardrail instances, validated at boot. */
  policies?: Record<string, PolicyDefinition>;
  /** The policy for calls made with the account key (a virtual key names its own). */
  defaultPolicy?: string;
  /** Extra hooks of your own, placed by stage after the built-in ones of that stage. */
  hooks?: Hook[];
  /** Dashboard single sign-on (OpenID Connect), JWT callers (docs/organizations.md) and `accountKey: 'disabled'`. */
  auth?: AuthConfig;
  server?: ServerSettings;
  /** Largest accepted JSON request body in bytes (default 25 MB); larger gets 413. */
  bodyLimitBytes?: number;
  upstream?: {
    /**
     * Total deadline of one upstream attempt, from sending the request until its answer body is
     * complete, streams included (default 600 000 ms). `x-gateway-request-timeout` overrides it per
     * request. Past it: 504 `upstream_timeout` (or, mid-stream, an error event with that code).
     */
    timeoutMs?: number;
    /** Longest wait for the next chunk of an answer body, between stream events (default 300 000 ms). */
    streamIdleTimeoutMs?: number;
    /** Most bytes of one answer the gateway reads whole (JSON answers, JSON transcripts; default 64 MiB); more is 502 `upstream_response_too_large`. */
    maxAnswerBytes?: number;
    /** Most upstream connection pools kept, one per origin (default 256); past it the least recently used idle pool is closed. */
    maxPools?: number;
    /** A pool with no request for this long is closed (default 60 000 ms). */
    poolIdleTimeoutMs?: number;
    /** Time allowed to open a connection (default 10 000 ms). */
    connectTimeoutMs?: number;
    /**
     * Most connections per upstream origin (default 1024). HTTP/1.1 carries one request at a time,
     * so this is also the most requests (streams included) in flight to one provider; more wait.
     */
    connectionsPerOrigin?: number;
  };
  customHosts?: CustomHostPolicy;
  /**
   * Whether `x-gateway-forward-headers` may name `cookie` (default false: refused with 400
   * `header_not_forwardable`, so the dashboard session cookie or other cookies of the gateway's
   * origin never reach a provider).
   */
  forwardCookies?: boolean;
  /** Pass-through answers (`/v1/<any other path>`). */
  passthrough?: {
    /**
     * Relay the upstream's `Set-Cookie` and `Access-Control-*` headers (default false: they are
     * removed, so an upstream cannot set cookies on, or widen the CORS policy of, the gateway's origin).
     */
    relayUnsafeHeaders?: boolean;
  };
  /** Batches translated for providers with their own batch API (docs/batches.md). */
  batches?: {
    /** Largest input file the gateway keeps for such a provider, in bytes (default 25 MiB; at most `bodyLimitBytes` arrives). */
    maxFileBytes?: number;
  };
  /**
   * Bytes held in memory across all requests in flight (request bodies being read, upstream
   * answers read whole). Default: an eighth of the process's memory, 256 MiB to 2 GiB
   * (env `GATEWAY_MEMORY_BUDGET_MB`). Past it: 503 `overloaded` with Retry-After.
   */
  memoryBudgetBytes?: number;
  /** Request logs: the durable store, bodies, queue and retention (see docs/logs.md). */
  logs?: LogsConfig;
  /** The Responses API (`POST /v1/responses`) on every provider (see docs/protocols.md). */
  responses?: ResponsesConfig;
  /** The Realtime API over WebSocket (`GET /v1/realtime`): its sessions' bounds (see docs/protocols.md#realtime). */
  realtime?: RealtimeSettings;
  /** The audit trail (docs/audit.md): whole months kept before the current one (default 0: kept forever). Env `GATEWAY_AUDIT_RETENTION_MONTHS` wins. */
  audit?: { retentionMonths?: number };
  /** `/metrics`: open to any caller when `public` (default false: the account key or a dashboard session). */
  metrics?: { public?: boolean };
  /** Extra runtime checks (next() misuse, context slices frozen once their stage is done); defaults to NODE_ENV !== 'production'. */
  development?: boolean;
  /** The vault and virtual keys (state is shared through Redis when `REDIS_URL` is set). */
  vault?: VaultSettings;
  /**
   * Providers' quotas shared between teams (docs/limits.md): `maxQueue` requests at most wait for one
   * quota on one instance (default 1000); more get 429 `quota_queue_full`.
   */
  quota?: { maxQueue?: number };
  /** Prices for cost budgets and logged costs: these win over the shipped price catalogue (docs/virtual-keys.md#prices). */
  pricing?: PricingOptions;
  /**
   * Named routes (docs/routing.md), checked at boot: `x-gateway-config: <name>` or a virtual key's
   * `route` sends a request through one. Default none.
   */
  routes?: Record<string, Route>;
  /** Model aliases: a request whose `model` is a key here takes that route (`models: { fast: { … } }`). Default none. */
  models?: Record<string, Route>;
  /** Routing state: the per-target circuit breaker (defaults: 5 failures in a row, or half of at least 20 requests within 60 s, open it for 30 s). */
  /**
   * `retry`: limits on routed retries (docs/routing.md#retry-limits): a floor under every wait before a
   * retry (default 50 ms, jittered up to twice it), at most `maxAttempts` upstream attempts per
   * request (default 32), and a retry budget per target (retries at most `budgetRatio` 0.2 of its
   * first attempts within `budgetWindowMs` 10 s, or `budgetMinRetries` 5).
   */
  routing?: { breaker?: Partial<BreakerSettings>; retry?: Partial<RetrySettings> };
  /** The response cache (docs/cache.md): its default for requests whose route sets none, and its stores. */
  cache?: CacheConfig;
  /** Budget alerts (docs/virtual-keys.md#budget-alerts): always shown by the dashboard; posted to `webhook` when set. */
  alerts?: AlertsConfig;
  /** Teams, users and roles (docs/organizations.md): how identity-provider groups and JWT claims map to roles and teams. */
  organization?: OrganizationConfig;
  /** The MCP gateway (docs/mcp.md): stdio servers (only here, never through the API) and how often tool lists are re-read. */
  mcp?: McpConfig;
}

export interface OrganizationConfig {
  /** Group claims → roles. A sign-in whose email matches no user gets an account only when a rule gives it a role. */
  groupRules?: GroupRule[];
  /** JWT claims → teams, for tokens whose `sub` is no service account's `jwt_subject`. */
  jwtRules?: JwtRule[];
  /** How long an invitation link is valid (default 72 hours). */
  invitationTtlHours?: number;
}

/** A stdio MCP server: a command every gateway instance starts as a child process (restarted with back-off, stderr logged). */
export interface McpStdioServer {
  /** Its tool prefix on `/mcp` and the path of `/mcp/<name>`: letters, digits, `-` and single `_`. */
  readonly name: string;
  readonly transport: 'stdio';
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to a minimal environment (PATH, HOME, …): the gateway's own environment is not passed on. */
  readonly env?: Readonly<Record<string, string>>;
  readonly allowed_tools?: readonly string[];
  readonly timeout_ms?: number;
  readonly max_result_bytes?: number;
}

export interface McpConfig {
  readonly servers?: readonly McpStdioServer[];
  /** Tool lists are re-read at least this often (ms, default 60 000), and whenever a server says they changed. */
  readonly refresh_ms?: number;
}

/** An MCP server name: letters, digits and `-`, words joined by single `_` (so `<server>__<tool>` splits at the first `__`). */
export const MCP_SERVER_NAME = /^(?=.{1,64}$)[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;

function resolveMcp(mcp: McpConfig | undefined): { readonly servers: readonly McpStdioServer[]; readonly refreshMs: number } {
  const servers = mcp?.servers ?? [];
  if (!Array.isArray(servers)) throw new BootError('INVALID_CONFIG', 'mcp.servers must be an array');
  const names = new Set<string>();
  for (const [index, server] of servers.entries()) {
    const at = `mcp.servers[${index}]`;
    if (typeof server?.name !== 'string' || !MCP_SERVER_NAME.test(server.name)) throw new BootError('INVALID_CONFIG', `${at}.name must be 1 to 64 letters, digits, - or single _`);
    if (names.has(server.name)) throw new BootError('INVALID_CONFIG', `${at}.name "${server.name}" is used twice`);
    names.add(server.name);
    if (server.transport !== 'stdio') throw new BootError('INVALID_CONFIG', `${at}.transport must be "stdio" (HTTP servers are registered through /admin/mcp-servers)`);
    if (typeof server.command !== 'string' || server.command === '') throw new BootError('INVALID_CONFIG', `${at}.command must be a non-empty string`);
    if (server.args !== undefined && (!Array.isArray(server.args) || server.args.some((arg: unknown) => typeof arg !== 'string'))) throw new BootError('INVALID_CONFIG', `${at}.args must be an array of strings`);
  }
  const refreshMs = mcp?.refresh_ms ?? 60_000;
  if (!Number.isInteger(refreshMs) || refreshMs < 1000) throw new BootError('INVALID_CONFIG', 'mcp.refresh_ms must be an integer of at least 1000');
  return { servers, refreshMs };
}

/** Budget alerts: a virtual key's spend reaching 80 % and 100 % of its budget, once per threshold and budget period. */
export interface AlertsConfig {
  webhook?: {
    /** `http(s)://` URL the alert is POSTed to as JSON (sent with the control-plane HTTP client, axios). */
    url: string;
    /** Extra request headers, e.g. `{ authorization: 'Bearer …' }` (never logged). */
    headers?: Record<string, string>;
    /** Deadline of one attempt (default 5000 ms); a failed attempt is retried twice (after 1 s and 5 s). */
    timeoutMs?: number;
  };
}

/**
 * The response cache. Entries live in `<GATEWAY_DATA_DIR>/cache.sqlite` (size-capped, least
 * recently used evicted first), or in Redis with `REDIS_URL` (shared by instances).
 */
export interface CacheConfig {
  /**
   * How requests are cached when their route has no `cache` (requests without a route included),
   * in a route's `cache` shape: `{ mode: 'simple', max_age: 600 }`. Default: none (nothing cached).
   */
  default?: RouteCache;
  /** Size cap of the embedded store's entries (default 256 MiB; env `GATEWAY_CACHE_MAX_MB`). Redis is capped by its own `maxmemory`. */
  maxBytes?: number;
  /** Largest answer stored, in bytes of JSON (default 1 MiB); a larger one is not stored. */
  maxEntryBytes?: number;
  /** Vectors kept per namespace for semantic lookups, the oldest dropped first (default 10 000). */
  semanticMaxEntries?: number;
  /**
   * Longest text a semantic lookup embeds, in characters (default 8 000, about 2 000 tokens); a
   * request whose text is longer is looked up exactly only, and nothing is embedded for it.
   */
  semanticMaxChars?: number;
  /** Longest a store read or write may hold a request (default 250 ms); past it the request goes on uncached. */
  timeoutMs?: number;
  /**
   * Longest an identical miss waits for the one upstream call already under way for its key (default
   * 30 000 ms), then asks upstream itself; 0 turns single flight off (every miss asks upstream).
   */
  singleFlightWaitMs?: number;
  /** A single-flight lease's time to live (default 10 000 ms, renewed by its holder): how soon a dead holder's key is freed. */
  singleFlightLeaseMs?: number;
}

/**
 * The HTTP server: address, limits and timeouts (defaults like nginx's; docs/limits.md). A timeout
 * of 0 disables it.
 */
export interface ServerSettings {
  host?: string;
  port?: number;
  /**
   * Proxy hops to trust in X-Forwarded-For when telling the client's address (default 0: the
   * socket's address). Behind one load balancer: 1. Used by the failed-authentication limit.
   */
  trustProxy?: number;
  /** Time allowed to receive a request's headers (default 60 000 ms, nginx's client_header_timeout). */
  headersTimeoutMs?: number;
  /** Time allowed to receive a whole request, body included (default 300 000 ms; Node's default). */
  requestTimeoutMs?: number;
  /** Most time between two chunks of a request body before 408 `body_timeout` (default 60 000 ms, nginx's client_body_timeout). */
  bodyTimeoutMs?: number;
  /** How long an idle keep-alive connection stays open (default 75 000 ms, nginx's keepalive_timeout; above common load balancers' 60 s). */
  keepAliveTimeoutMs?: number;
  /**
   * Failed authentications (wrong API key, admin key or dashboard sign-in) allowed per client address
   * and in total per window before further failures get 429 `too_many_failed_auth` (default 20 per
   * address and 1000 in total per 60 000 ms). Counted per instance, in memory.
   */
  failedAuth?: { perAddress?: number; global?: number; windowMs?: number };
}

export interface VaultSettings {
  /** How long a decrypted credential stays cached in the request thread (default 60 000 ms; 0: never). */
  credentialCacheMs?: number;
  /** Prefix of every Redis key and channel (default `gateway`; env `GATEWAY_REDIS_PREFIX`). */
  redisPrefix?: string;
  /** Output tokens reserved for a request that sets no `max_tokens` (default 1024). */
  outputTokenEstimate?: number;
  /**
   * How long a request's budget reservation stays counted when nothing settles it (its instance
   * died): then the next admission releases it (docs/limits.md#reservations-and-their-lease).
   * Default twice `upstream.timeoutMs` (20 minutes by default); env `GATEWAY_RESERVATION_LEASE_MS`.
   */
  reservationLeaseMs?: number;
  /**
   * A request header naming the end user when the body names none (no `user`, no Messages
   * `metadata.user_id`): the end-user level of limits (docs/limits.md#levels). Env `GATEWAY_END_USER_HEADER`.
   */
  endUserHeader?: string;
}

/** A header name, lower-cased (headers are matched lower-cased); undefined when unset. */
function endUserHeaderOf(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[A-Za-z0-9-]{1,64}$/.test(value)) throw new BootError('INVALID_CONFIG', `vault.endUserHeader (GATEWAY_END_USER_HEADER) must be a header name (letters, digits, "-"), got "${value}"`);
  return value.toLowerCase();
}

/** The configuration with defaults and environment applied. */
export interface ResolvedConfig {
  /** `routes`, each checked by `parseRoute`. */
  readonly routes: ReadonlyMap<string, Route>;
  /** `models` (aliases), each checked by `parseRoute`. */
  readonly models: ReadonlyMap<string, Route>;
  readonly routing: { readonly breaker: BreakerSettings; readonly retry: RetrySettings };
  /** The response cache, with defaults applied; `default` checked by `parseRouteCache`. */
  readonly cache: {
    readonly default?: RouteCache;
    readonly maxBytes: number;
    readonly maxEntryBytes: number;
    readonly semanticMaxEntries: number;
    readonly semanticMaxChars: number;
    readonly timeoutMs: number;
    readonly singleFlightWaitMs: number;
    readonly singleFlightLeaseMs: number;
  };
  readonly providers: ProviderRegistration[];
  readonly guardrails: Array<GuardrailRegistration | GuardrailFactory>;
  readonly policies: Readonly<Record<string, PolicyDefinition>>;
  readonly defaultPolicy?: string;
  readonly hooks: Hook[];
  /** Identity providers for the dashboard and JWT issuers for API callers, checked. */
  readonly auth: ResolvedAuth;
  readonly host: string;
  readonly port: number;
  readonly server: {
    trustProxy: number;
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    bodyTimeoutMs: number;
    keepAliveTimeoutMs: number;
    failedAuth: { perAddress: number; global: number; windowMs: number };
  };
  readonly dataDir: string;
  readonly accountKey?: string;
  readonly logLevel: string;
  readonly bodyLimitBytes: number;
  readonly upstream: {
    timeoutMs: number;
    streamIdleTimeoutMs: number;
    connectTimeoutMs: number;
    connectionsPerOrigin: number;
    maxAnswerBytes: number;
    maxPools: number;
    poolIdleTimeoutMs: number;
  };
  readonly customHosts: Required<CustomHostPolicy>;
  readonly forwardCookies: boolean;
  readonly passthrough: { readonly relayUnsafeHeaders: boolean };
  readonly batches: { readonly maxFileBytes: number };
  readonly memoryBudgetBytes: number;
  readonly development: boolean;
  /** `REDIS_URL`: shared state for several instances; the embedded SQLite file when unset. */
  readonly redisUrl?: string;
  readonly vault: Required<Omit<VaultSettings, 'endUserHeader'>> & Pick<VaultSettings, 'endUserHeader'>;
  readonly quota: { readonly maxQueue: number };
  readonly pricing: PricingOptions;
  readonly logs: {
    bodies: BodyLogging;
    bodyMaxBytes: number;
    queueCapacity: number;
    batchSize: number;
    retryMs: number;
    spillMaxBytes: number;
    retentionMaxAgeMs: number;
    retentionMaxBytes: number;
    /** PostgreSQL connection string (`DATABASE_URL`); the SQLite file under the data dir when absent. */
    databaseUrl?: string;
    postgresSchema: string;
    /** Whether the stored bodies are indexed for search (`GATEWAY_LOG_SEARCH`). */
    search: boolean;
    /** The SQLite log writer thread's nice value (`GATEWAY_LOG_WRITER_NICE`). */
    writerNice: number;
    /** External sinks, each with its delivery settings. */
    sinks: readonly ResolvedLogSink[];
  };
  readonly metricsPublic: boolean;
  readonly responses: { readonly builtInTools: 'drop' | 'refuse'; readonly retentionMaxAgeMs: number };
  readonly realtime: Readonly<Required<RealtimeSettings>>;
  /** The audit trail's retention in whole months (0: kept forever); stored beside the request log (SQLite, or its PostgreSQL schema). */
  readonly audit: { readonly retentionMonths: number };
  /** Budget alerts' webhook, checked; absent when none is configured. */
  readonly organization: { readonly groupRules: readonly GroupRule[]; readonly jwtRules: readonly JwtRule[]; readonly invitationTtlMs: number; readonly scimToken?: string };
  /** The MCP gateway: the configured stdio servers, checked, and the tool lists' refresh period. */
  readonly mcp: { readonly servers: readonly McpStdioServer[]; readonly refreshMs: number };
  readonly alerts: { readonly webhook?: { readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly timeoutMs: number } };
  /** OTLP/HTTP trace export; absent when no endpoint is configured. */
  readonly telemetry?: { tracesUrl: string; headers: Record<string, string>; serviceName: string };
}

/** Declares a gateway configuration with its types checked. */
export function defineConfig(config: GatewayConfig): GatewayConfig {
  return config;
}

const positiveInteger = (value: unknown, name: string): number => {
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0) {
    throw new BootError('INVALID_CONFIG', `${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return number;
};

const MB = 1024 * 1024;
/** `cache.semanticMaxChars` when unset: about 2 000 tokens of text embedded at most per lookup. */
const DEFAULT_SEMANTIC_MAX_CHARS = 8000;

/**
 * Default size of the memory budget: an eighth of the memory this process may use (the cgroup
 * limit when there is one, else the machine's), between 256 MiB and 2 GiB.
 */
function defaultMemoryBudgetBytes(): number {
  const limit = process.constrainedMemory() || totalmem();
  return Math.min(2 * 1024 ** 3, Math.max(256 * 1024 ** 2, Math.floor(limit / 8)));
}

const booleanOf = (value: string | undefined, name: string): boolean | undefined => {
  if (value === undefined || value === '') return undefined;
  if (/^(true|1|yes|on)$/i.test(value)) return true;
  if (/^(false|0|no|off)$/i.test(value)) return false;
  throw new BootError('INVALID_CONFIG', `${name} must be true or false, got ${JSON.stringify(value)}`);
};

/** `OTEL_EXPORTER_OTLP_HEADERS`: `name=value,name2=value2` (values URL-encoded). */
const otlpHeaders = (text: string | undefined): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      headers[pair.slice(0, at).trim().toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new BootError('INVALID_CONFIG', `OTEL_EXPORTER_OTLP_HEADERS has a value that is not URL-encoded (header "${pair.slice(0, at).trim()}")`);
    }
  }
  return headers;
};

function resolveAlerts(alerts: AlertsConfig | undefined): ResolvedConfig['alerts'] {
  if (alerts === undefined || alerts.webhook === undefined) return {};
  const { url, headers = {}, timeoutMs = 5000 } = alerts.webhook;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (typeof url !== 'string' || parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new BootError('INVALID_CONFIG', 'alerts.webhook.url must be an http:// or https:// URL');
  }
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers) || Object.values(headers).some((value) => typeof value !== 'string')) {
    throw new BootError('INVALID_CONFIG', 'alerts.webhook.headers must be an object of string values');
  }
  return { webhook: { url, headers: { ...headers }, timeoutMs: Math.max(1, positiveInteger(timeoutMs, 'alerts.webhook.timeoutMs')) } };
}

function resolveTelemetry(environment: NodeJS.ProcessEnv): ResolvedConfig['telemetry'] {
  const tracesEndpoint = environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const endpoint = environment.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!tracesEndpoint && !endpoint) return undefined;
  return {
    tracesUrl: tracesEndpoint || `${endpoint!.replace(/\/+$/, '')}/v1/traces`,
    headers: { ...otlpHeaders(environment.OTEL_EXPORTER_OTLP_HEADERS), ...otlpHeaders(environment.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    serviceName: environment.OTEL_SERVICE_NAME || 'llm-gateway',
  };
}

/** A nice value for the log writer: an integer 0–19. */
function niceOf(value: string | number): number {
  const nice = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof nice !== 'number' || !Number.isInteger(nice) || nice < 0 || nice > 19) {
    throw new BootError('INVALID_CONFIG', `logs.writerNice (GATEWAY_LOG_WRITER_NICE) must be an integer from 0 to 19, got ${JSON.stringify(value)}`);
  }
  return nice;
}

function resolveLogs(logs: LogsConfig = {}, environment: NodeJS.ProcessEnv): ResolvedConfig['logs'] {
  const days = environment.GATEWAY_LOG_RETENTION_DAYS ?? logs.retention?.maxAgeDays ?? 30;
  const maxBytes = environment.GATEWAY_LOG_MAX_MB !== undefined ? positiveInteger(environment.GATEWAY_LOG_MAX_MB, 'GATEWAY_LOG_MAX_MB') * MB : logs.retention?.maxBytes ?? 1024 * MB;
  const spill = environment.GATEWAY_LOG_SPILL_MAX_MB !== undefined ? positiveInteger(environment.GATEWAY_LOG_SPILL_MAX_MB, 'GATEWAY_LOG_SPILL_MAX_MB') * MB : logs.spillMaxBytes ?? 1024 * MB;
  const schema = environment.GATEWAY_LOG_PG_SCHEMA || logs.postgresSchema || 'public';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new BootError('INVALID_CONFIG', `the log schema must be a lower-case SQL identifier, got ${JSON.stringify(schema)}`);
  return {
    bodies: booleanOf(environment.GATEWAY_LOG_BODIES, 'GATEWAY_LOG_BODIES') ?? logs.bodies ?? true,
    bodyMaxBytes: positiveInteger(logs.bodyMaxBytes ?? 32 * 1024, 'logs.bodyMaxBytes'),
    queueCapacity: Math.max(1, positiveInteger(logs.queueCapacity ?? 10_000, 'logs.queueCapacity')),
    batchSize: Math.max(1, positiveInteger(logs.batchSize ?? 500, 'logs.batchSize')),
    retryMs: Math.max(1, positiveInteger(logs.retryMs ?? 1000, 'logs.retryMs')),
    spillMaxBytes: positiveInteger(spill, 'logs.spillMaxBytes'),
    retentionMaxAgeMs: positiveInteger(typeof days === 'string' ? Number(days) : days, 'GATEWAY_LOG_RETENTION_DAYS') * 86_400_000,
    retentionMaxBytes: positiveInteger(maxBytes, 'logs.retention.maxBytes'),
    databaseUrl: environment.DATABASE_URL || undefined,
    postgresSchema: schema,
    search: booleanOf(environment.GATEWAY_LOG_SEARCH, 'GATEWAY_LOG_SEARCH') ?? logs.search ?? true,
    writerNice: niceOf(environment.GATEWAY_LOG_WRITER_NICE ?? logs.writerNice ?? 0),
    sinks: resolveSinks(logs.sinks),
  };
}

function resolveServer(server: ServerSettings, environment: NodeJS.ProcessEnv): ResolvedConfig['server'] {
  const headersTimeoutMs = positiveInteger(server.headersTimeoutMs ?? 60_000, 'server.headersTimeoutMs');
  const requestTimeoutMs = positiveInteger(server.requestTimeoutMs ?? 300_000, 'server.requestTimeoutMs');
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new BootError('INVALID_CONFIG', 'server.headersTimeoutMs must not be larger than server.requestTimeoutMs');
  }
  return {
    trustProxy: positiveInteger(environment.GATEWAY_TRUST_PROXY ?? server.trustProxy ?? 0, 'server.trustProxy'),
    headersTimeoutMs,
    requestTimeoutMs,
    bodyTimeoutMs: positiveInteger(server.bodyTimeoutMs ?? 60_000, 'server.bodyTimeoutMs'),
    keepAliveTimeoutMs: positiveInteger(server.keepAliveTimeoutMs ?? 75_000, 'server.keepAliveTimeoutMs'),
    failedAuth: {
      perAddress: Math.max(1, positiveInteger(server.failedAuth?.perAddress ?? 20, 'server.failedAuth.perAddress')),
      global: Math.max(1, positiveInteger(server.failedAuth?.global ?? 1000, 'server.failedAuth.global')),
      windowMs: Math.max(1, positiveInteger(server.failedAuth?.windowMs ?? 60_000, 'server.failedAuth.windowMs')),
    },
  };
}

/**
 * Applies defaults, then the environment (HOST, PORT, GATEWAY_DATA_DIR, GATEWAY_API_KEY, LOG_LEVEL,
 * GATEWAY_TRUST_PROXY, REDIS_URL, GATEWAY_REDIS_PREFIX, GATEWAY_CACHE_MAX_MB, DATABASE_URL, GATEWAY_LOG_*, GATEWAY_METRICS_PUBLIC, OTEL_*, GATEWAY_OIDC_*, GATEWAY_JWT_*, GATEWAY_PUBLIC_URL). GATEWAY_MASTER_KEY is not read here: only the vault worker reads it.
 */
export function resolveConfig(config: GatewayConfig, environment: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  if (!Array.isArray(config.providers)) throw new BootError('INVALID_CONFIG', 'providers must be an array');
  const policies = config.policies ?? {};
  if (typeof policies !== 'object' || policies === null || Array.isArray(policies)) {
    throw new BootError('INVALID_CONFIG', 'policies must be an object of named policies');
  }
  if (config.defaultPolicy !== undefined && !Object.hasOwn(policies, config.defaultPolicy)) {
    throw new BootError(
      'INVALID_CONFIG',
      `defaultPolicy names the policy "${config.defaultPolicy}", which is not configured (policies: ${Object.keys(policies).join(', ') || 'none'})`,
    );
  }
  return {
    providers: config.providers,
    guardrails: config.guardrails ?? [],
    policies,
    ...(config.defaultPolicy === undefined ? {} : { defaultPolicy: config.defaultPolicy }),
    hooks: config.hooks ?? [],
    auth: resolveAuth(config.auth, environment),
    host: environment.HOST ?? config.server?.host ?? '127.0.0.1',
    port: positiveInteger(environment.PORT ?? config.server?.port ?? 8787, 'PORT'),
    server: resolveServer(config.server ?? {}, environment),
    dataDir: environment.GATEWAY_DATA_DIR ?? './data',
    accountKey: environment.GATEWAY_API_KEY || undefined,
    logLevel: environment.LOG_LEVEL ?? 'info',
    bodyLimitBytes: positiveInteger(config.bodyLimitBytes ?? 25 * 1024 * 1024, 'bodyLimitBytes'),
    upstream: {
      timeoutMs: positiveInteger(config.upstream?.timeoutMs ?? 600_000, 'upstream.timeoutMs'),
      connectTimeoutMs: positiveInteger(config.upstream?.connectTimeoutMs ?? 10_000, 'upstream.connectTimeoutMs'),
      connectionsPerOrigin: positiveInteger(config.upstream?.connectionsPerOrigin ?? 1024, 'upstream.connectionsPerOrigin'),
      streamIdleTimeoutMs: positiveInteger(config.upstream?.streamIdleTimeoutMs ?? 300_000, 'upstream.streamIdleTimeoutMs'),
      maxAnswerBytes: positiveInteger(config.upstream?.maxAnswerBytes ?? 64 * MB, 'upstream.maxAnswerBytes'),
      maxPools: positiveInteger(config.upstream?.maxPools ?? 256, 'upstream.maxPools'),
      poolIdleTimeoutMs: positiveInteger(config.upstream?.poolIdleTimeoutMs ?? 60_000, 'upstream.poolIdleTimeoutMs'),
    },
    customHosts: {
      allowLoopback: config.customHosts?.allowLoopback ?? true,
      allowPrivate: config.customHosts?.allowPrivate ?? false,
      allowCidrs: config.customHosts?.allowCidrs ?? [],
    },
    forwardCookies: config.forwardCookies ?? false,
    passthrough: { relayUnsafeHeaders: config.passthrough?.relayUnsafeHeaders ?? false },
    batches: { maxFileBytes: positiveInteger(config.batches?.maxFileBytes ?? 25 * MB, 'batches.maxFileBytes') },
    memoryBudgetBytes:
      environment.GATEWAY_MEMORY_BUDGET_MB !== undefined
        ? positiveInteger(environment.GATEWAY_MEMORY_BUDGET_MB, 'GATEWAY_MEMORY_BUDGET_MB') * MB
        : positiveInteger(config.memoryBudgetBytes ?? defaultMemoryBudgetBytes(), 'memoryBudgetBytes'),
    development: config.development ?? environment.NODE_ENV !== 'production',
    redisUrl: environment.REDIS_URL || undefined,
    vault: {
      credentialCacheMs: positiveInteger(config.vault?.credentialCacheMs ?? 60_000, 'vault.credentialCacheMs'),
      redisPrefix: environment.GATEWAY_REDIS_PREFIX ?? config.vault?.redisPrefix ?? 'gateway',
      outputTokenEstimate: positiveInteger(config.vault?.outputTokenEstimate ?? 1024, 'vault.outputTokenEstimate'),
      reservationLeaseMs: Math.max(
        1,
        positiveInteger(
          environment.GATEWAY_RESERVATION_LEASE_MS || (config.vault?.reservationLeaseMs ?? 2 * positiveInteger(config.upstream?.timeoutMs ?? 600_000, 'upstream.timeoutMs')),
          'vault.reservationLeaseMs (GATEWAY_RESERVATION_LEASE_MS)',
        ),
      ),
      endUserHeader: endUserHeaderOf(environment.GATEWAY_END_USER_HEADER ?? config.vault?.endUserHeader),
    },
    quota: { maxQueue: positiveInteger(config.quota?.maxQueue ?? 1000, 'quota.maxQueue') },
    pricing: config.pricing ?? {},
    logs: resolveLogs(config.logs, environment),
    responses: resolveResponses(config.responses, environment),
    realtime: resolveRealtime(config.realtime ?? {}),
    audit: { retentionMonths: positiveInteger(environment.GATEWAY_AUDIT_RETENTION_MONTHS || (config.audit?.retentionMonths ?? 0), 'audit.retentionMonths (GATEWAY_AUDIT_RETENTION_MONTHS)') },
    metricsPublic: booleanOf(environment.GATEWAY_METRICS_PUBLIC, 'GATEWAY_METRICS_PUBLIC') ?? config.metrics?.public ?? false,
    telemetry: resolveTelemetry(environment),
    alerts: resolveAlerts(config.alerts),
    routes: checkedRoutes(config.routes, 'routes'),
    models: checkedRoutes(config.models, 'models'),
    routing: { breaker: resolveBreaker(config.routing?.breaker ?? {}), retry: resolveRetry(config.routing?.retry ?? {}) },
    cache: resolveCache(config.cache ?? {}, environment),
    organization: resolveOrganization(config.organization ?? {}, environment),
    mcp: resolveMcp(config.mcp),
  };
}

const ORG_ROLE_NAMES = ['owner', 'admin', 'auditor'];
const TEAM_ROLE_NAMES = ['team_admin', 'member', 'viewer'];

function resolveOrganization(organization: OrganizationConfig, environment: NodeJS.ProcessEnv): ResolvedConfig['organization'] {
  const groupRules = organization.groupRules ?? [];
  groupRules.forEach((rule, index) => {
    const at = `organization.groupRules[${index}]`;
    if (typeof rule.group !== 'string' || rule.group === '') throw new BootError('INVALID_CONFIG', `${at}.group must be a non-empty string`);
    if (rule.role !== undefined && !ORG_ROLE_NAMES.includes(rule.role)) throw new BootError('INVALID_CONFIG', `${at}.role must be one of ${ORG_ROLE_NAMES.join(', ')}`);
    if ((rule.team === undefined) !== (rule.teamRole === undefined)) throw new BootError('INVALID_CONFIG', `${at}: team and teamRole go together`);
    if (rule.teamRole !== undefined && !TEAM_ROLE_NAMES.includes(rule.teamRole)) throw new BootError('INVALID_CONFIG', `${at}.teamRole must be one of ${TEAM_ROLE_NAMES.join(', ')}`);
    if (rule.role === undefined && rule.team === undefined) throw new BootError('INVALID_CONFIG', `${at} gives nothing: set role, or team and teamRole`);
  });
  const jwtRules = organization.jwtRules ?? [];
  jwtRules.forEach((rule, index) => {
    for (const field of ['claim', 'equals', 'team'] as const) {
      if (typeof rule[field] !== 'string' || rule[field] === '') throw new BootError('INVALID_CONFIG', `organization.jwtRules[${index}].${field} must be a non-empty string`);
    }
  });
  const scimToken = environment.GATEWAY_SCIM_TOKEN || undefined;
  if (scimToken !== undefined && scimToken.length < 32) throw new BootError('INVALID_CONFIG', 'GATEWAY_SCIM_TOKEN must be at least 32 characters (for example: openssl rand -base64 32)');
  return {
    groupRules,
    jwtRules,
    invitationTtlMs: positiveInteger(organization.invitationTtlHours ?? 72, 'organization.invitationTtlHours') * 3_600_000,
    ...(scimToken !== undefined ? { scimToken } : {}),
  };
}

function resolveCache(cache: CacheConfig, environment: NodeJS.ProcessEnv): ResolvedConfig['cache'] {
  let fallback: RouteCache | undefined;
  if (cache.default !== undefined) {
    try {
      fallback = parseRouteCache(cache.default, 'cache.default');
    } catch (error) {
      throw new BootError('INVALID_CONFIG', (error as Error).message);
    }
  }
  const maxBytes =
    environment.GATEWAY_CACHE_MAX_MB !== undefined ? positiveInteger(environment.GATEWAY_CACHE_MAX_MB, 'GATEWAY_CACHE_MAX_MB') * MB : positiveInteger(cache.maxBytes ?? 256 * MB, 'cache.maxBytes');
  return {
    ...(fallback === undefined ? {} : { default: fallback }),
    maxBytes,
    maxEntryBytes: Math.max(1, positiveInteger(cache.maxEntryBytes ?? MB, 'cache.maxEntryBytes')),
    semanticMaxEntries: Math.max(1, positiveInteger(cache.semanticMaxEntries ?? 10_000, 'cache.semanticMaxEntries')),
    semanticMaxChars: Math.max(1, positiveInteger(cache.semanticMaxChars ?? DEFAULT_SEMANTIC_MAX_CHARS, 'cache.semanticMaxChars')),
    timeoutMs: Math.max(1, positiveInteger(cache.timeoutMs ?? 250, 'cache.timeoutMs')),
    singleFlightWaitMs: positiveInteger(cache.singleFlightWaitMs ?? 30_000, 'cache.singleFlightWaitMs'),
    singleFlightLeaseMs: Math.max(100, positiveInteger(cache.singleFlightLeaseMs ?? 10_000, 'cache.singleFlightLeaseMs')),
  };
}

function resolveRealtime(realtime: RealtimeSettings): ResolvedConfig['realtime'] {
  return {
    idleTimeoutMs: positiveInteger(realtime.idleTimeoutMs ?? 300_000, 'realtime.idleTimeoutMs'),
    maxSessionMs: positiveInteger(realtime.maxSessionMs ?? 1_800_000, 'realtime.maxSessionMs'),
    maxFrameBytes: positiveInteger(realtime.maxFrameBytes ?? 16 * MB, 'realtime.maxFrameBytes'),
    maxBufferedBytes: positiveInteger(realtime.maxBufferedBytes ?? 4 * MB, 'realtime.maxBufferedBytes'),
  };
}

function resolveResponses(responses: ResponsesConfig = {}, environment: NodeJS.ProcessEnv): ResolvedConfig['responses'] {
  const builtInTools = responses.builtInTools ?? 'drop';
  if (builtInTools !== 'drop' && builtInTools !== 'refuse') throw new BootError('INVALID_CONFIG', "responses.builtInTools must be 'drop' or 'refuse'");
  const days = environment.GATEWAY_RESPONSES_RETENTION_DAYS ?? responses.retentionDays ?? 30;
  return { builtInTools, retentionMaxAgeMs: positiveInteger(typeof days === 'string' ? Number(days) : days, 'responses.retentionDays') * 86_400_000 };
}

/** Checks named routes at boot: a BootError names the route and the field (`routes.fast.targets[1].weight`). */
function checkedRoutes(routes: Record<string, unknown> | undefined, field: 'routes' | 'models'): ReadonlyMap<string, Route> {
  const checked = new Map<string, Route>();
  if (routes === undefined) return checked;
  if (typeof routes !== 'object' || routes === null || Array.isArray(routes)) throw new BootError('INVALID_CONFIG', `${field} must be an object of named routes`);
  for (const [name, value] of Object.entries(routes)) {
    try {
      checked.set(name, parseRoute(value, `${field}.${name}`));
    } catch (error) {
      throw new BootError('INVALID_CONFIG', `${field}.${name}: ${(error as Error).message}`);
    }
  }
  return checked;
}

function resolveRetry(retry: Partial<RetrySettings>): RetrySettings {
  const ratio = retry.budgetRatio ?? DEFAULT_RETRY.budgetRatio;
  if (typeof ratio !== 'number' || !(ratio >= 0 && ratio <= 10)) throw new BootError('INVALID_CONFIG', 'routing.retry.budgetRatio must be a number from 0 to 10');
  const maxAttempts = positiveInteger(retry.maxAttempts ?? DEFAULT_RETRY.maxAttempts, 'routing.retry.maxAttempts');
  if (maxAttempts < 1) throw new BootError('INVALID_CONFIG', 'routing.retry.maxAttempts must be at least 1');
  const budgetWindowMs = positiveInteger(retry.budgetWindowMs ?? DEFAULT_RETRY.budgetWindowMs, 'routing.retry.budgetWindowMs');
  if (budgetWindowMs < 1) throw new BootError('INVALID_CONFIG', 'routing.retry.budgetWindowMs must be at least 1');
  return {
    floorMs: positiveInteger(retry.floorMs ?? DEFAULT_RETRY.floorMs, 'routing.retry.floorMs'),
    maxAttempts,
    budgetRatio: ratio,
    budgetMinRetries: positiveInteger(retry.budgetMinRetries ?? DEFAULT_RETRY.budgetMinRetries, 'routing.retry.budgetMinRetries'),
    budgetWindowMs,
  };
}

function resolveBreaker(breaker: Partial<BreakerSettings>): BreakerSettings {
  const ratio = breaker.failureRatio ?? DEFAULT_BREAKER.failureRatio;
  if (typeof ratio !== 'number' || !(ratio > 0 && ratio <= 1)) throw new BootError('INVALID_CONFIG', 'routing.breaker.failureRatio must be a number above 0 and at most 1');
  return {
    failures: positiveInteger(breaker.failures ?? DEFAULT_BREAKER.failures, 'routing.breaker.failures'),
    failureRatio: ratio,
    minRequests: positiveInteger(breaker.minRequests ?? DEFAULT_BREAKER.minRequests, 'routing.breaker.minRequests'),
    windowMs: positiveInteger(breaker.windowMs ?? DEFAULT_BREAKER.windowMs, 'routing.breaker.windowMs'),
    cooldownMs: positiveInteger(breaker.cooldownMs ?? DEFAULT_BREAKER.cooldownMs, 'routing.breaker.cooldownMs'),
  };
}
