import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** What the fake received. `closed` resolves when the client side of that request went away. */
export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
  /** The client's port: equal for two requests that came over one keep-alive connection. */
  readonly remotePort: number;
  readonly json: () => any;
  /** Resolves with the time (ms since the request arrived) at which its connection closed. */
  readonly closed: Promise<number>;
}

export type FakeHandler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface Fake {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** `origin + '/v1'`: pass this as `x-gateway-custom-host`. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  handle(handler: FakeHandler): void;
  close(): Promise<void>;
}

const fixtures = join(process.cwd(), 'plugins/providers/openai/__fixtures__');

export const openAIFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** The recorded stream, one event per line, as SSE event strings. */
export const openAIStreamEvents = (): string[] =>
  openAIFixture('chat-stream.txt')
    .split('\n')
    .filter(Boolean)
    .map((line) => `data: ${line}\n\n`);

/** Answers like OpenAI's chat endpoint: the recorded completion, or the recorded stream. */
export const openAIChatHandler: FakeHandler = (request, response) => {
  const body = request.body.length ? request.json() : {};
  if (body.stream) {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const events = openAIStreamEvents();
    const includeUsage = body.stream_options?.include_usage === true;
    for (const event of events) {
      if (!includeUsage && event.includes('"choices":[]')) continue;
      response.write(event);
    }
    response.end();
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(openAIFixture('chat-completion.json'));
};

/** A real HTTP server on loopback that records every request and answers through `handle`. */
export async function startFake(handler: FakeHandler = openAIChatHandler): Promise<Fake> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const server = createServer(async (incoming, response) => {
    const arrived = performance.now();
    const closed = new Promise<number>((resolve) => incoming.socket.once('close', () => resolve(performance.now() - arrived)));
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
    } catch {
      return; // the sender went away mid-body
    }
    const body = Buffer.concat(chunks);
    const recorded: RecordedRequest = {
      method: incoming.method ?? '',
      url: incoming.url ?? '',
      headers: incoming.headers,
      body,
      remotePort: incoming.socket.remotePort ?? -1,
      json: () => JSON.parse(body.toString('utf8')),
      closed,
    };
    requests.push(recorded);
    try {
      await current(recorded, response);
    } catch (error) {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    requests,
    handle(next) {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
