import type { Logger } from 'pino';
import type { McpStdioServer } from '../../config/index.js';
import { redactSecrets } from '../redact.js';
import { type McpServerRecord, type McpServerSettings, type McpServerStore, type McpTool, type McpToolCatalogue, servedTools } from './server-store.js';
import { type UpstreamEndpoint, UpstreamConnection } from './upstream.js';

/** A stdio MCP server of `gateway.config.ts` (`mcp.servers`): started as a child process by every instance. */
export type StdioServerConfig = McpStdioServer;

/** One upstream server as the endpoint uses it: its settings, its tools, and this instance's connection. */
export interface UpstreamServer {
  readonly name: string;
  /** The stored server's id; absent for a configured stdio server. */
  readonly id?: string;
  readonly allowed_tools?: readonly string[];
  readonly timeoutMs: number;
  readonly maxResultBytes: number;
  readonly toolRequestsPerMinute?: number;
  readonly costPerCallUsd?: number;
  /** The server's own guardrail policy, applied after the caller's. */
  readonly guardrailPolicy?: string;
  readonly status: 'ok' | 'unreachable';
  readonly tools: readonly McpTool[];
  readonly connection: UpstreamConnection;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RESULT_BYTES = 10 * 1024 * 1024;
export const DEFAULT_REFRESH_MS = 60_000;

export interface CatalogueOptions {
  /** The stored servers (usable once the vault started). */
  readonly store: () => McpServerStore;
  readonly stdio: readonly StdioServerConfig[];
  /** The upstream headers of a stored server: its `headers` and its credential's secret; throws when the credential is gone. */
  readonly headers: (settings: McpServerSettings) => Promise<Record<string, string>>;
  /** The custom-host policy: resolves when the server's URL may be reached, throws otherwise. */
  readonly checkUrl: (url: string) => Promise<void>;
  /** The fetch HTTP transports send with: its connections check every address a name resolves to (DNS rebinding). */
  readonly fetch?: typeof fetch;
  /** The fetch of a server with OAuth client credentials (its token on every request, a new one after a 401); undefined: the plain one. */
  readonly authorized?: (settings: McpServerSettings, base: typeof fetch) => typeof fetch | undefined;
  readonly logger: Logger;
  /** How often a server's tool list is re-read at least (default 60 s). */
  readonly refreshMs?: number;
  /** Back-off between restarts of a stdio server (tests shorten it). */
  readonly restartDelaysMs?: readonly number[];
}

const failureMessage = (error: unknown) => redactSecrets(error instanceof Error ? error.message : String(error), []).slice(0, 500);

/**
 * The upstream servers this instance serves: the stored ones (their settings and tools from the
 * shared state, re-read after any instance's change) and the configured stdio ones (their tools as
 * this instance's child process lists them), each with one pooled connection per instance.
 */
export class McpCatalogue {
  private readonly connections = new Map<string, UpstreamConnection>();
  private readonly stdioTools = new Map<string, McpToolCatalogue>();
  private readonly refreshing = new Set<string>();
  private subscribed = false;

  constructor(private readonly options: CatalogueOptions) {}

  /** Starts the stdio servers and lists their tools (a server that fails to start is logged and retried on use). */
  async start(): Promise<void> {
    this.subscribe();
    await Promise.all(this.options.stdio.map((server) => this.refreshStdio(server)));
  }

  /** Probes settings about to be stored: initialize and tools/list through a connection of its own, closed after. */
  async probe(settings: McpServerSettings): Promise<McpToolCatalogue> {
    const connection = new UpstreamConnection({ name: settings.name, endpoint: this.httpEndpoint(settings), timeoutMs: Math.min(settings.timeout_ms ?? DEFAULT_TIMEOUT_MS, 15_000), logger: this.options.logger });
    try {
      await this.options.checkUrl(settings.url);
      return { status: 'ok', tools: await connection.listTools(), listed_at: new Date().toISOString() };
    } catch (error) {
      return { status: 'unreachable', error: failureMessage(error), tools: [], listed_at: new Date().toISOString() };
    } finally {
      await connection.close();
    }
  }

  /** Every server by name: the configured stdio ones, then the stored ones. */
  async servers(): Promise<ReadonlyMap<string, UpstreamServer>> {
    this.subscribe();
    const servers = new Map<string, UpstreamServer>();
    for (const config of this.options.stdio) {
      const catalogue = this.stdioTools.get(config.name);
      servers.set(config.name, {
        name: config.name,
        ...(config.allowed_tools ? { allowed_tools: config.allowed_tools } : {}),
        timeoutMs: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
        maxResultBytes: config.max_result_bytes ?? DEFAULT_MAX_RESULT_BYTES,
        status: catalogue?.status ?? 'unreachable',
        tools: catalogue?.tools ?? [],
        connection: this.stdioConnection(config),
      });
      if (catalogue === undefined || this.stale(catalogue)) void this.refreshStdio(config);
    }
    for (const [name, stored] of await this.options.store().servers()) {
      if (servers.has(name)) continue;
      const { record, catalogue } = stored;
      servers.set(name, {
        name,
        id: record.id,
        ...(record.allowed_tools ? { allowed_tools: record.allowed_tools } : {}),
        timeoutMs: record.timeout_ms ?? DEFAULT_TIMEOUT_MS,
        maxResultBytes: record.max_result_bytes ?? DEFAULT_MAX_RESULT_BYTES,
        ...(record.guardrail_policy !== undefined ? { guardrailPolicy: record.guardrail_policy } : {}),
        ...(record.tool_requests_per_minute !== undefined ? { toolRequestsPerMinute: record.tool_requests_per_minute } : {}),
        ...(record.cost_per_call_usd !== undefined ? { costPerCallUsd: record.cost_per_call_usd } : {}),
        status: catalogue?.status ?? 'unreachable',
        tools: servedTools(stored).tools,
        connection: this.storedConnection(record),
      });
      if (catalogue === undefined || this.stale(catalogue)) void this.refreshStored(record);
    }
    return servers;
  }

  /** The names of the configured stdio servers (a stored server may not take one). */
  configuredNames(): string[] {
    return this.options.stdio.map((server) => server.name);
  }

  async close(): Promise<void> {
    const connections = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(connections.map((connection) => connection.close()));
  }

  private stale(catalogue: McpToolCatalogue): boolean {
    return Date.parse(catalogue.listed_at) + (this.options.refreshMs ?? DEFAULT_REFRESH_MS) <= Date.now();
  }

  /** A change to a stored server anywhere closes this instance's connection to its old version. */
  private subscribe(): void {
    if (this.subscribed) return;
    this.subscribed = true;
    this.options.store().onChange((id) => {
      void this.options.store().get(id).then((record) => {
        for (const [key, connection] of this.connections) {
          if (key.startsWith(`${id}:`) && key !== `${id}:${record?.version}`) {
            this.connections.delete(key);
            void connection.close();
          }
        }
      }, () => {});
    });
  }

  private httpEndpoint(settings: McpServerSettings): Extract<UpstreamEndpoint, { transport: 'streamable-http' | 'sse' }> {
    const fetcher = this.options.authorized?.(settings, this.options.fetch ?? fetch) ?? this.options.fetch;
    return { transport: settings.transport, url: settings.url, headers: () => this.options.headers(settings), ...(fetcher ? { fetch: fetcher } : {}) };
  }

  private storedConnection(record: McpServerRecord): UpstreamConnection {
    const key = `${record.id}:${record.version}`;
    let connection = this.connections.get(key);
    if (connection === undefined) {
      const checked: UpstreamEndpoint = { ...this.httpEndpoint(record), headers: async () => (await this.options.checkUrl(record.url), this.options.headers(record)) };
      connection = new UpstreamConnection({ name: record.name, endpoint: checked, timeoutMs: record.timeout_ms ?? DEFAULT_TIMEOUT_MS, logger: this.options.logger, onToolsChanged: () => void this.refreshStored(record, true) });
      this.connections.set(key, connection);
    }
    return connection;
  }

  private stdioConnection(config: StdioServerConfig): UpstreamConnection {
    const key = `stdio:${config.name}`;
    let connection = this.connections.get(key);
    if (connection === undefined) {
      const endpoint: UpstreamEndpoint = { transport: 'stdio', command: config.command, ...(config.args ? { args: config.args } : {}), ...(config.env ? { env: config.env } : {}) };
      connection = new UpstreamConnection({
        name: config.name,
        endpoint,
        timeoutMs: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
        logger: this.options.logger,
        onToolsChanged: () => void this.refreshStdio(config, true),
        ...(this.options.restartDelaysMs ? { restartDelaysMs: this.options.restartDelaysMs } : {}),
      });
      this.connections.set(key, connection);
    }
    return connection;
  }

  /** Re-reads a stored server's tools (once at a time) and records them in the shared state when they changed. */
  private async refreshStored(record: McpServerRecord, force = false): Promise<void> {
    const key = `stored:${record.id}`;
    if (this.refreshing.has(key) && !force) return;
    this.refreshing.add(key);
    try {
      const connection = this.storedConnection(record);
      let catalogue: McpToolCatalogue;
      try {
        catalogue = { status: 'ok', tools: await connection.listTools(), listed_at: new Date().toISOString() };
      } catch (error) {
        catalogue = { status: 'unreachable', error: failureMessage(error), tools: [], listed_at: new Date().toISOString() };
      }
      const current = await this.options.store().get(record.id);
      const before = await this.options.store().catalogue(record.id);
      const same = before !== undefined && before.status === catalogue.status && JSON.stringify(before.tools) === JSON.stringify(catalogue.tools);
      // An unchanged list only moves its time (no event: nothing to re-read, no client to tell).
      if (current?.version === record.version) await this.options.store().setCatalogue(record.id, catalogue, !same);
    } catch (error) {
      this.options.logger.warn({ server: record.name, err: { message: failureMessage(error) } }, 'MCP tool list refresh failed');
    } finally {
      this.refreshing.delete(key);
    }
  }

  private async refreshStdio(config: StdioServerConfig, force = false): Promise<void> {
    const key = `stdio:${config.name}`;
    if (this.refreshing.has(key) && !force) return;
    this.refreshing.add(key);
    try {
      this.stdioTools.set(config.name, { status: 'ok', tools: await this.stdioConnection(config).listTools(), listed_at: new Date().toISOString() });
    } catch (error) {
      this.options.logger.warn({ server: config.name, err: { message: failureMessage(error) } }, 'MCP stdio server: tools/list failed');
      this.stdioTools.set(config.name, { status: 'unreachable', error: failureMessage(error), tools: [], listed_at: new Date().toISOString() });
    } finally {
      this.refreshing.delete(key);
    }
  }
}
