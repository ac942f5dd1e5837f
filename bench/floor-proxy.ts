import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Pool } from 'undici';

/** Headers that belong to one connection and are never forwarded (undici also refuses most of them). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'expect']);

type HeaderRecord = Record<string, string | string[] | undefined>;

function forwardable(headers: HeaderRecord | IncomingHttpHeaders): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) kept[name] = value;
  }
  return kept;
}

/** What a proxy that does nothing costs: the same pool settings the gateway uses (keep-alive, 1024 connections). */
function createUpstreamPool(upstreamUrl: string): Pool {
  return new Pool(new URL(upstreamUrl).origin, { connections: 1024, keepAliveTimeout: 30_000 });
}

/**
 * The floor: a node:http server that passes every request to the upstream through an undici Pool
 * untouched (method, path, headers, streamed body) and passes the answer back the same way. The
 * gateway's throughput is reported as a share of this one's.
 */
export function createFloorProxy(upstreamUrl: string): { server: Server; close: () => Promise<void> } {
  const pool = createUpstreamPool(upstreamUrl);
  const server = createServer((request, response) => relay(pool, request, response));
  return { server, close: () => pool.close() };
}

function relay(pool: Pool, request: IncomingMessage, response: ServerResponse): void {
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  pool
    .request({
      method: (request.method ?? 'GET') as 'GET',
      path: request.url ?? '/',
      headers: forwardable(request.headers),
      body: hasBody ? request : null,
      signal: controller.signal,
    })
    .then((answer) => {
      response.writeHead(answer.statusCode, forwardable(answer.headers));
      // pipe(), not stream.pipeline(): pipeline() creates and aborts an AbortController per call,
      // whose DOMException measured ~9% of this proxy's CPU. A client that leaves aborts the request above.
      answer.body.once('error', () => response.destroy());
      answer.body.pipe(response);
    })
    .catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      const code = (error as { code?: string })?.code ?? 'error';
      response.writeHead(502, { 'content-type': 'text/plain' }).end(`floor proxy: upstream failed (${code})\n`);
    });
}
