import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';

/** One HTTP/1.1 request as the raw fake read it. */
export interface RawRequest {
  readonly head: string;
  readonly body: Buffer;
  readonly json: () => any;
}

/** Writes whatever bytes it likes to the socket (or nothing at all): byte-level control over a fault. */
export type RawScript = (socket: Socket, request: RawRequest) => void | Promise<void>;

export interface RawUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** `origin + '/v1'`: pass this as `x-gateway-custom-host`. */
  readonly baseUrl: string;
  /** Sets the script for the requests that follow. */
  handle(script: RawScript): void;
  close(): Promise<void>;
}

const HEAD_END = '\r\n\r\n';

/**
 * A loopback upstream on a raw `net` server: it reads each request (head and Content-Length body)
 * and hands the socket to the current script, which can reset it, stall, trickle, or lie about
 * the length. Several requests on one keep-alive connection are read in turn.
 */
export async function startRawUpstream(): Promise<RawUpstream> {
  let script: RawScript = (socket) => {
    socket.destroy();
  };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      for (;;) {
        const end = buffered.indexOf(HEAD_END);
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        const total = end + HEAD_END.length + length;
        if (buffered.length < total) return;
        const body = buffered.subarray(end + HEAD_END.length, total);
        buffered = buffered.subarray(total);
        void script(socket, { head, body, json: () => JSON.parse(body.toString('utf8')) });
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    handle(next) {
      script = next;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A response head; `headers` are written as given (so a test can declare a length it will not send). */
export function responseHead(status: number, headers: Record<string, string | number>): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Error'}\r\n${lines.join('')}\r\n`;
}

/** One chunk of a chunked body. */
export const chunked = (data: string | Buffer): Buffer => {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
};

/** The end of a chunked body. */
export const LAST_CHUNK = '0\r\n\r\n';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the socket is still open for writing. */
export const writable = (socket: Socket): boolean => !socket.destroyed && socket.writable;

/** A chat completion as OpenAI sends it, small. */
export const COMPLETION = JSON.stringify({
  id: 'chatcmpl-fault',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
});

/** One SSE chunk of a chat stream carrying `text`. */
export const streamEvent = (text: string): string =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-fault',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-4o',
    choices: [{ index: 0, delta: { content: text }, finish_reason: null, logprobs: null }],
  })}\n\n`;

/** The last SSE chunk of a chat stream, then `[DONE]`. */
export const STREAM_END = `data: ${JSON.stringify({
  id: 'chatcmpl-fault',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'gpt-4o',
  choices: [{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null }],
})}\n\ndata: [DONE]\n\n`;
