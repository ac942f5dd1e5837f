import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Logger } from 'pino';
import { redactSecrets } from '../redact.js';
import { loadedSdk, loadSdk, RPC, type Sdk } from './sdk.js';
import type { McpTool } from './server-store.js';

/** How to reach one upstream server: over HTTP (streamable or legacy SSE) or a child process (stdio). */
export type UpstreamEndpoint =
  | {
      readonly transport: 'streamable-http' | 'sse';
      readonly url: string;
      readonly headers: () => Promise<Record<string, string>>;
      /** The fetch the transport sends with (the custom-host policy's guarded connections); absent: the global one. */
      readonly fetch?: typeof fetch;
    }
  | { readonly transport: 'stdio'; readonly command: string; readonly args?: readonly string[]; readonly env?: Readonly<Record<string, string>> };

export interface UpstreamOptions {
  /** The server's name (in errors and log lines). */
  readonly name: string;
  readonly endpoint: UpstreamEndpoint;
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** Called when the server says its tools changed (`notifications/tools/list_changed`), or a stdio server restarted. */
  readonly onToolsChanged?: () => void;
  /** Back-off between restarts of a stdio server that exited (ms, the last one repeated). */
  readonly restartDelaysMs?: readonly number[];
}

/** A progress notification's numbers, as the SDK hands them on. */
export interface ProgressUpdate {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** An upstream failure the gateway answers as a JSON-RPC error (the code, and a message naming the server). */
export class UpstreamMcpError extends Error {
  override readonly name = 'UpstreamMcpError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const GATEWAY_CLIENT = { name: 'llm-gateway', version: '0.1.0' };
const DEFAULT_RESTART_DELAYS_MS = [500, 1000, 2000, 5000, 10_000, 30_000];

/** True for the answer of a server that no longer knows the session (streamable HTTP: 404 on a request with a session id). */
const sessionExpired = (error: unknown) => loadedSdk !== undefined && error instanceof loadedSdk.StreamableHTTPError && error.code === 404;

/**
 * One instance's connection to one upstream MCP server, through the official SDK's client: opened
 * on first use, re-opened when the upstream session expired (the request is sent again once, the
 * caller does not notice), a stdio server's process restarted with back-off when it exits, its
 * stderr logged line by line.
 */
export class UpstreamConnection {
  private client?: Promise<Client>;
  private closed = false;
  private restarts = 0;
  private restartTimer?: NodeJS.Timeout;

  constructor(private readonly options: UpstreamOptions) {}

  /** Every tool of the server (all pages). */
  async listTools(): Promise<McpTool[]> {
    return this.withClient(async (client) => {
      const tools: McpTool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 100; page++) {
        const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.options.timeoutMs });
        tools.push(...(listed.tools as McpTool[]));
        cursor = listed.nextCursor;
        if (cursor === undefined) break;
      }
      this.restarts = 0;
      return tools;
    });
  }

  /** Calls a tool; the result as the server gave it. */
  async callTool(name: string, args: Record<string, unknown> | undefined, signal?: AbortSignal, onProgress?: (progress: ProgressUpdate) => void): Promise<Record<string, unknown>> {
    return this.withClient(async (client) => {
      const request = { name, ...(args !== undefined ? { arguments: args } : {}) };
      // With a progress listener, the SDK asks the server for progress and each update restarts the time-out.
      const progress = onProgress ? { onprogress: onProgress, resetTimeoutOnProgress: true } : {};
      return (await client.callTool(request, undefined, { timeout: this.options.timeoutMs, ...(signal ? { signal } : {}), ...progress })) as Record<string, unknown>;
    });
  }

  /**
   * Runs `use` with the open client (resources, prompts, completion): the same session handling
   * and error mapping as tool calls. `use` is given the server's capabilities too.
   */
  async with<T>(use: (client: Client, capabilities: Record<string, unknown>) => Promise<T>): Promise<T> {
    return this.withClient((client) => use(client, (client.getServerCapabilities() ?? {}) as Record<string, unknown>));
  }

  /** The per-request options of the SDK's client calls (the server's time-out). */
  get requestOptions(): { timeout: number } {
    return { timeout: this.options.timeoutMs };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = undefined;
    await client?.then((opened) => opened.close()).catch(() => {});
  }

  /** Runs `use` on the open client: once more on a fresh session when the upstream's expired; errors mapped to {@link UpstreamMcpError}. */
  private async withClient<T>(use: (client: Client) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const opening = this.open();
      try {
        return await use(await opening);
      } catch (error) {
        if (attempt === 0 && sessionExpired(error)) {
          this.options.logger.info({ server: this.options.name }, 'MCP upstream session expired: re-opening it');
          this.drop(opening);
          continue;
        }
        throw this.mapped(error, opening);
      }
    }
  }

  private mapped(error: unknown, opening: Promise<Client>): UpstreamMcpError {
    const server = this.options.name;
    // Cancelled by the client (the SDK has told the server): the connection stays.
    if (error instanceof Error && error.name === 'AbortError') return new UpstreamMcpError(RPC.Cancelled, `The call to MCP server "${server}" was cancelled.`);
    if (loadedSdk !== undefined && error instanceof loadedSdk.McpError) {
      if (error.code === RPC.RequestTimeout) return new UpstreamMcpError(RPC.RequestTimeout, `MCP server "${server}" did not answer within ${this.options.timeoutMs} ms.`);
      // A JSON-RPC error the server answered with: its own code and message.
      if (error.code !== RPC.ConnectionClosed) return new UpstreamMcpError(error.code, error.message.replace(/^MCP error -?\d+: /, ''));
    }
    // The connection failed (refused, closed, a malformed answer): the next request opens a new one.
    this.drop(opening);
    const reason = redactSecrets(error instanceof Error ? error.message : String(error), []).slice(0, 300);
    return new UpstreamMcpError(RPC.InternalError, `MCP server "${server}" failed: ${reason}`);
  }

  private drop(opening: Promise<Client>): void {
    if (this.client !== opening) return;
    this.client = undefined;
    opening.then((client) => client.close()).catch(() => {});
  }

  private open(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error('the connection is closed'));
    if (this.client) return this.client;
    const opening = this.connect();
    this.client = opening;
    opening.catch(() => {
      if (this.client === opening) this.client = undefined;
    });
    return opening;
  }

  private async connect(): Promise<Client> {
    const sdk = await loadSdk();
    const client = new sdk.Client(GATEWAY_CLIENT, { capabilities: {} });
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => this.options.onToolsChanged?.());
    const transport = await this.transport(sdk);
    try {
      await client.connect(transport, { timeout: this.options.timeoutMs });
    } catch (error) {
      // A failed start must not leave the transport behind (an SSE stream would keep reconnecting).
      await transport.close().catch(() => {});
      throw error;
    }
    client.onclose = () => this.closedUnderneath(client);
    return client;
  }

  private async transport(sdk: Sdk): Promise<Transport> {
    const { endpoint, logger, name } = this.options;
    if (endpoint.transport === 'stdio') {
      const transport = new sdk.StdioClientTransport({ command: endpoint.command, args: [...(endpoint.args ?? [])], env: { ...endpoint.env }, stderr: 'pipe' });
      transport.stderr?.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logger.info({ server: name, stderr: redactSecrets(line.slice(0, 2000), []) }, 'MCP server stderr');
      });
      return transport;
    }
    const headers = await endpoint.headers();
    const url = new URL(endpoint.url);
    // Both transports send `requestInit`'s headers on every request (the SSE stream's GET included).
    const options = { requestInit: { headers }, ...(endpoint.fetch ? { fetch: endpoint.fetch } : {}) };
    return endpoint.transport === 'sse' ? new sdk.SSEClientTransport(url, options) : new sdk.StreamableHTTPClientTransport(url, options);
  }

  /** The client closed without us closing it (a stdio server exited): forget it, and restart a stdio server after a back-off. */
  private closedUnderneath(client: Client): void {
    if (this.closed) return;
    void this.client?.then((current) => {
      if (current !== client) return;
      this.client = undefined;
      if (this.options.endpoint.transport === 'stdio') this.scheduleRestart();
    }, () => {});
  }

  /** Starts a stdio server again after the next back-off delay; a failed start schedules the next one. */
  private scheduleRestart(): void {
    const delays = this.options.restartDelaysMs ?? DEFAULT_RESTART_DELAYS_MS;
    const delay = delays[Math.min(this.restarts, delays.length - 1)];
    this.restarts += 1;
    this.options.logger.warn({ server: this.options.name, restartInMs: delay }, 'MCP stdio server exited: restarting it');
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      if (this.closed || this.client) return;
      this.open().then(
        () => this.options.onToolsChanged?.(),
        (error: unknown) => {
          this.options.logger.warn({ server: this.options.name, err: { message: redactSecrets(String(error), []) } }, 'MCP stdio server did not start');
          if (!this.closed) this.scheduleRestart();
        },
      );
    }, delay);
    this.restartTimer.unref();
  }
}
