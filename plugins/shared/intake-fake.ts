import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

// What the log sinks' loopback fakes share (plugins/sinks/<id>/<id>-fake.ts): an HTTP server on a
// free loopback port that reads each request whole and lets the fake answer it. Test code only
// (a -fake file: not published).

/** A loopback HTTP fake of an intake: `handle` answers each request with its whole body read (gunzipped when it says gzip, unless `gunzip` is false). */
export async function intakeFake(
  handle: (request: { method: string; url: string; headers: Record<string, string | string[] | undefined>; body: Buffer }) => { status: number; body?: unknown; headers?: Record<string, string> },
  gunzip = true,
): Promise<{ url: string; close(): void }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let body = Buffer.concat(chunks);
      if (gunzip && request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const answer = handle({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      const text = answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(text);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
