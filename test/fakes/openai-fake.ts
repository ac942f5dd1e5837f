import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
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

/** The recorded stream of a text completion, as SSE event strings. */
export const openAICompletionStreamEvents = (): string[] =>
  openAIFixture('completion-stream.txt')
    .split('\n')
    .filter(Boolean)
    .map((line) => `data: ${line}\n\n`);

/** The audio bytes the fake answers `/v1/audio/speech` with (an MP3 frame header, then a fixed pattern). */
export const openAISpeechBytes: Buffer = Buffer.concat([
  Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xfb, 0x90, 0x64]),
  Buffer.from(Array.from({ length: 48 * 1024 }, (_, index) => (index * 31 + 7) % 256)),
]);

/** The fixture vector as float32 little-endian base64, which is what OpenAI sends for `encoding_format: base64`. */
export const base64Embedding = (vector: readonly number[]): string => Buffer.from(new Float32Array(vector).buffer).toString('base64');

const json = (response: ServerResponse, status: number, body: unknown): void => {
  const bytes = Buffer.from(JSON.stringify(body));
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(bytes.length) }).end(bytes);
};

/** An OpenAI-shaped 400, as the real API answers a request it cannot use. */
const refuse = (response: ServerResponse, param: string | null, message: string): void =>
  json(response, 400, { error: { message, type: 'invalid_request_error', param, code: null } });

/** The JSON body of a POST, or undefined after answering 400 when it is not a JSON object or lacks a required field. */
function jsonBody(request: RecordedRequest, response: ServerResponse, required: readonly string[]): Record<string, any> | undefined {
  if (!String(request.headers['content-type'] ?? '').startsWith('application/json')) {
    refuse(response, null, 'Expected a JSON body.');
    return undefined;
  }
  let body: unknown;
  try {
    body = request.json();
  } catch {
    refuse(response, null, 'We could not parse the JSON body of your request.');
    return undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    refuse(response, null, 'The body must be a JSON object.');
    return undefined;
  }
  const missing = required.find((field) => !(field in body));
  if (missing) {
    refuse(response, missing, `Missing required parameter: '${missing}'.`);
    return undefined;
  }
  return body as Record<string, any>;
}

const isMultipart = (request: RecordedRequest) => String(request.headers['content-type'] ?? '').startsWith('multipart/form-data');

const imageAnswer = (body: Record<string, any>) => {
  const image = JSON.parse(openAIFixture('image.json'));
  const count = typeof body.n === 'number' ? body.n : 1;
  const one = body.response_format === 'b64_json' ? { b64_json: Buffer.from('fake-png-bytes').toString('base64') } : { url: image.data[0].url };
  return { created: image.created, data: Array.from({ length: count }, () => ({ ...one, ...(body.model === 'dall-e-3' ? { revised_prompt: image.data[0].revised_prompt } : {}) })) };
};

/** Answers like OpenAI's text completions endpoint: the recorded completion, or the recorded stream. */
export const openAICompletionHandler: FakeHandler = (request, response) => {
  const body = jsonBody(request, response, ['model']);
  if (!body) return;
  if (!body.stream) return json(response, 200, JSON.parse(openAIFixture('completion.json')));
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const includeUsage = body.stream_options?.include_usage === true;
  for (const event of openAICompletionStreamEvents()) {
    if (!includeUsage && event.includes('"choices":[]')) continue;
    response.write(event);
  }
  response.end();
};

/**
 * Answers every OpenAI endpoint with its documented shape: chat and text completions, embeddings
 * (float or base64, one vector per input), images (generation, edit, variation), speech (binary),
 * transcription and translation, models, files and batches. A request the real API would refuse
 * for its form (not JSON, a required field missing, not multipart) gets OpenAI's 400.
 */
export const openAIHandler: FakeHandler = (request, response) => {
  const path = request.url.split('?')[0];
  const route = `${request.method} ${path}`;
  if (route === 'POST /v1/chat/completions') return openAIChatHandler(request, response);
  if (route === 'POST /v1/completions') return openAICompletionHandler(request, response);
  if (route === 'POST /v1/embeddings') {
    const body = jsonBody(request, response, ['model', 'input']);
    if (!body) return;
    const fixture = JSON.parse(openAIFixture('embedding.json'));
    const vector: number[] = fixture.data[0].embedding.slice(0, body.dimensions ?? undefined);
    const inputs = Array.isArray(body.input) && typeof body.input[0] !== 'number' ? body.input.length : 1;
    const embedding = body.encoding_format === 'base64' ? base64Embedding(vector) : vector;
    return json(response, 200, { ...fixture, model: body.model, data: Array.from({ length: inputs }, (_, index) => ({ object: 'embedding', index, embedding })) });
  }
  if (route === 'POST /v1/images/generations') {
    const body = jsonBody(request, response, ['prompt']);
    if (body) json(response, 200, imageAnswer(body));
    return;
  }
  if (route === 'POST /v1/images/edits' || route === 'POST /v1/images/variations') {
    if (!isMultipart(request)) return refuse(response, null, 'Expected multipart/form-data.');
    return json(response, 200, imageAnswer({}));
  }
  if (route === 'POST /v1/audio/transcriptions' || route === 'POST /v1/audio/translations') {
    if (!isMultipart(request)) return refuse(response, null, 'Expected multipart/form-data.');
    return json(response, 200, { text: 'Hello from the fake.' });
  }
  if (route === 'POST /v1/audio/speech') {
    const body = jsonBody(request, response, ['model', 'input', 'voice']);
    if (!body) return;
    response.writeHead(200, { 'content-type': 'audio/mpeg', 'transfer-encoding': 'chunked' });
    response.end(openAISpeechBytes);
    return;
  }
  if (route === 'GET /v1/models') return json(response, 200, JSON.parse(openAIFixture('models.json')));
  if (route === 'POST /v1/files') {
    if (!isMultipart(request)) return refuse(response, null, 'Expected multipart/form-data.');
    return json(response, 200, JSON.parse(openAIFixture('file.json')));
  }
  if (route === 'GET /v1/files') {
    const file = JSON.parse(openAIFixture('file.json'));
    return json(response, 200, { object: 'list', data: [file], first_id: file.id, last_id: file.id, has_more: false });
  }
  if (route === 'POST /v1/batches') {
    const body = jsonBody(request, response, ['input_file_id', 'endpoint', 'completion_window']);
    if (body) json(response, 200, { ...JSON.parse(openAIFixture('batch.json')), input_file_id: body.input_file_id, endpoint: body.endpoint, metadata: body.metadata ?? null });
    return;
  }
  if (request.method === 'GET' && path.startsWith('/v1/batches/')) {
    return json(response, 200, { ...JSON.parse(openAIFixture('batch.json')), id: decodeURIComponent(path.slice('/v1/batches/'.length)) });
  }
  json(response, 404, { error: { message: `Unknown request URL: ${route}.`, type: 'invalid_request_error', param: null, code: 'unknown_url' } });
};

/** A real HTTP server on loopback that records every request and answers through `handle`. */
export async function startFake(handler: FakeHandler = openAIChatHandler): Promise<Fake> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  // One close listener per connection, telling every request it carried (a listener per request
  // piled up on keep-alive connections: MaxListenersExceededWarning).
  const waiting = new WeakMap<Socket, Array<() => void>>();
  const closedAfter = (socket: Socket, arrived: number) =>
    new Promise<number>((resolve) => {
      const done = () => resolve(performance.now() - arrived);
      const list = waiting.get(socket);
      if (list === undefined || socket.destroyed) done();
      else list.push(done);
    });
  const server = createServer(async (incoming, response) => {
    const arrived = performance.now();
    const closed = closedAfter(incoming.socket, arrived);
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
  server.on('connection', (socket: Socket) => {
    const list: Array<() => void> = [];
    waiting.set(socket, list);
    socket.once('close', () => {
      for (const done of list.splice(0)) done();
    });
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
