import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

/** How the fake behaves when a response is asked for. */
export interface RealtimeFakeBehaviour {
  /** The text of each answer (split in deltas of 4 characters). Default `Hello from the fake.` */
  text?: string;
  /** `abrupt`: after the first delta the connection is cut without a close frame (a fault mid-session). */
  fault?: 'abrupt';
  /** The usage of each `response.done`. */
  usage?: { input_tokens: number; output_tokens: number };
  /** Answer the handshake with this status and an OpenAI error body instead of upgrading. */
  refuse?: { status: number; code: string; message: string };
}

/** One session the fake served: the handshake's headers and URL, and the client events it got. */
export interface FakeSession {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly received: Array<Record<string, any>>;
  readonly socket: WebSocket;
}

export interface RealtimeFake {
  /** `http://127.0.0.1:<port>/v1`: a custom host (or base URL) for the openai provider. */
  readonly baseUrl: string;
  readonly sessions: FakeSession[];
  behaviour: RealtimeFakeBehaviour;
  close(): Promise<void>;
}

let sequence = 0;
const id = (prefix: string) => `${prefix}_${++sequence}`;

/**
 * A loopback Realtime API server following the documented event sequence: `session.created` on
 * connect; `session.updated` for `session.update`; `conversation.item.created` for
 * `conversation.item.create`; for `response.create`: `response.created`,
 * `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`…,
 * `response.output_text.done`, `response.content_part.done`, `response.output_item.done` and
 * `response.done` with usage.
 */
export async function startRealtimeFake(behaviour: RealtimeFakeBehaviour = {}): Promise<RealtimeFake> {
  const sessions: FakeSession[] = [];
  const server = createServer((_request, response) => {
    response.writeHead(426, { 'content-type': 'application/json' }).end('{"error":{"message":"WebSocket only","type":"invalid_request_error","code":null,"param":null}}');
  });
  const sockets = new WebSocketServer({ noServer: true });
  const fake: RealtimeFake = { baseUrl: '', sessions, behaviour, close: async () => {} };
  server.on('upgrade', (request, socket, head) => {
    const refusal = fake.behaviour.refuse;
    if (refusal) {
      const body = JSON.stringify({ error: { message: refusal.message, type: 'invalid_request_error', code: refusal.code, param: null } });
      socket.end(`HTTP/1.1 ${refusal.status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => {
      const session: FakeSession = { url: request.url ?? '', headers: request.headers, received: [], socket: ws };
      sessions.push(session);
      const model = new URL(request.url ?? '/', 'http://fake').searchParams.get('model');
      const send = (event: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: id('event'), ...event }));
      send({ type: 'session.created', session: { id: id('sess'), object: 'realtime.session', model, modalities: ['text'] } });
      ws.on('message', (data) => {
        const event = JSON.parse(data.toString()) as Record<string, any>;
        session.received.push(event);
        if (event.type === 'session.update') send({ type: 'session.updated', session: { id: 'sess', object: 'realtime.session', model, ...event.session } });
        else if (event.type === 'conversation.item.create') send({ type: 'conversation.item.created', previous_item_id: null, item: { id: id('item'), status: 'completed', ...event.item } });
        else if (event.type === 'response.create') respond(ws, send, fake.behaviour);
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    async close() {
      for (const session of sessions) session.socket.terminate();
      sockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

function respond(ws: WebSocket, send: (event: Record<string, unknown>) => void, behaviour: RealtimeFakeBehaviour): void {
  const responseId = id('resp');
  const itemId = id('item');
  const text = behaviour.text ?? 'Hello from the fake.';
  const usage = behaviour.usage ?? { input_tokens: 12, output_tokens: 8 };
  const part = { response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 };
  send({ type: 'response.created', response: { id: responseId, object: 'realtime.response', status: 'in_progress', output: [] } });
  send({ type: 'response.output_item.added', response_id: responseId, output_index: 0, item: { id: itemId, type: 'message', role: 'assistant', content: [] } });
  send({ type: 'response.content_part.added', ...part, part: { type: 'text', text: '' } });
  for (let index = 0; index < text.length; index += 4) {
    send({ type: 'response.output_text.delta', ...part, delta: text.slice(index, index + 4) });
    if (behaviour.fault === 'abrupt') {
      ws.terminate();
      return;
    }
  }
  send({ type: 'response.output_text.done', ...part, text });
  send({ type: 'response.content_part.done', ...part, part: { type: 'text', text } });
  const item = { id: itemId, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'text', text }] };
  send({ type: 'response.output_item.done', response_id: responseId, output_index: 0, item });
  send({
    type: 'response.done',
    response: {
      id: responseId,
      object: 'realtime.response',
      status: 'completed',
      output: [item],
      usage: { total_tokens: usage.input_tokens + usage.output_tokens, ...usage, input_token_details: { cached_tokens: 0, text_tokens: usage.input_tokens, audio_tokens: 0 }, output_token_details: { text_tokens: usage.output_tokens, audio_tokens: 0 } },
    },
  });
}
