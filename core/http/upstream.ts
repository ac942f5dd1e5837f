import type { Readable } from 'node:stream';
import type { LookupFunction } from 'node:net';
import { Pool } from 'undici';
import { errors, GatewayError } from '../errors.js';
import type { UpstreamRequest } from '../spec/provider.js';

export interface UpstreamClientOptions {
  timeoutMs: number;
  connectTimeoutMs: number;
  connectionsPerOrigin: number;
  /** Lookup used for connections to custom hosts (re-checks the address policy at connect time). */
  guardedLookup?: LookupFunction;
}

export interface UpstreamAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

const CONNECT_FAILURES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EREFUSEDHOST',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'EPIPE',
]);

const MAX_PARSED_URLS = 1024;

/**
 * The forward transport: one keep-alive undici Pool per upstream origin (measured 44 µs CPU per
 * request against 278 µs for axios; see DESIGN.md). Knows nothing about providers.
 */
export class UpstreamClient {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly options: UpstreamClientOptions) {}

  private pool(origin: string, guarded: boolean): Pool {
    const key = guarded ? `guarded:${origin}` : origin;
    let pool = this.pools.get(key);
    if (pool === undefined) {
      pool = new Pool(origin, {
        connections: this.options.connectionsPerOrigin,
        keepAliveTimeout: 30_000,
        connect: {
          timeout: this.options.connectTimeoutMs,
          ...(guarded && this.options.guardedLookup ? { lookup: this.options.guardedLookup } : {}),
        },
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  /**
   * Sends one request. Resolves when the response headers arrive; the body is returned unread.
   * Connect failures become 502, time-outs 504, a client that left 499.
   */
  async send(
    request: UpstreamRequest,
    options: { signal: AbortSignal; guarded: boolean; timeoutMs?: number },
  ): Promise<UpstreamAnswer> {
    const url = this.parse(request.url);
    const timeout = options.timeoutMs ?? this.options.timeoutMs;
    try {
      const answer = await this.pool(url.origin, options.guarded).request({
        method: request.method,
        path: url.path,
        headers: request.headers,
        body: request.body ?? null,
        signal: options.signal,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
      return { status: answer.statusCode, headers: answer.headers, body: answer.body };
    } catch (error) {
      throw upstreamFailure(error, url.origin, options.signal);
    }
  }

  /** Upstream URLs already parsed: a provider sends every request to the same few, so each is parsed once (bounded). */
  private readonly parsed = new Map<string, { origin: string; path: string }>();

  private parse(value: string): { origin: string; path: string } {
    let url = this.parsed.get(value);
    if (url === undefined) {
      const parsed = new URL(value);
      url = { origin: parsed.origin, path: parsed.pathname + parsed.search };
      if (this.parsed.size >= MAX_PARSED_URLS) this.parsed.clear();
      this.parsed.set(value, url);
    }
    return url;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.close().catch(() => pool.destroy())));
    this.pools.clear();
  }

  /** Connections open and requests queued, per origin (for metrics). */
  stats(): Array<{ origin: string; connected: number; pending: number; running: number }> {
    return [...this.pools.entries()].map(([origin, pool]) => ({
      origin,
      connected: pool.stats.connected,
      pending: pool.stats.pending,
      running: pool.stats.running,
    }));
  }
}

/** Maps a transport error to the gateway's error. The origin is named; nothing secret is. */
export function upstreamFailure(error: unknown, origin: string, signal?: AbortSignal): GatewayError {
  if (error instanceof GatewayError) return error;
  const code = (error as { code?: string })?.code ?? '';
  if (signal?.aborted) return errors.clientClosed('The client closed the request.', { code: 'client_closed' });
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return errors.upstreamTimeout(`The upstream ${origin} did not answer in time.`, { code: 'upstream_timeout' });
  }
  if (CONNECT_FAILURES.has(code)) {
    return errors.badGateway(`The upstream ${origin} could not be reached (${code}).`, { code: 'upstream_unreachable' });
  }
  return errors.badGateway(`The upstream ${origin} failed (${code || (error as Error)?.name || 'error'}).`, {
    code: 'upstream_error',
  });
}
