import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';

/** How the mock streams: `chunks` content chunks, `gapMs` apart, the first one at once. */
export interface MockStreamShape {
  chunks: number;
  gapMs: number;
}

/** Streams open now and the most ever open at once (the concurrent-streams test checks them). */
export interface StreamGauge {
  open: number;
  peak: number;
}

/** Largest request body the mock reads (the bench sends a few hundred bytes). */
const BODY_LIMIT_BYTES = 64 * 1024;

const FIXTURE_PATH = join('plugins', 'providers', 'openai', '__fixtures__', 'chat-completion.json');

/**
 * A mock OpenAI upstream on loopback: `POST …/chat/completions` answers the recorded chat
 * completion fixture, or with `"stream": true` a stream of content chunks (plus a usage chunk when
 * `stream_options.include_usage` is asked for) ending with `data: [DONE]`.
 */
export function createMockUpstream(shape: MockStreamShape, gauge: StreamGauge = { open: 0, peak: 0 }): Server {
  const completion = Buffer.from(JSON.stringify(JSON.parse(readFileSync(join(process.cwd(), FIXTURE_PATH), 'utf8'))));
  return createServer((request, response) => {
    void answer(request, response, completion, shape, gauge).catch(() => response.destroy());
  });
}

/** A mock upstream that answers every request with `status` and an OpenAI error body as soon as the body is read. */
export function createFailingUpstream(status: number): Server {
  const body = Buffer.from(JSON.stringify({ error: { message: 'The server is overloaded.', type: 'server_error', param: null, code: null } }));
  return createServer((request, response) => {
    void readSmallBody(request).then(
      () => response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(body.length) }).end(body),
      () => response.destroy(),
    );
  });
}

async function answer(request: IncomingMessage, response: ServerResponse, completion: Buffer, shape: MockStreamShape, gauge: StreamGauge): Promise<void> {
  if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found","type":"invalid_request_error"}}');
    return;
  }
  const body = JSON.parse((await readSmallBody(request)).toString('utf8')) as {
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
  };
  if (body.stream === true) {
    gauge.open++;
    gauge.peak = Math.max(gauge.peak, gauge.open);
    response.once('close', () => gauge.open--);
    streamChunks(response, shape, body.stream_options?.include_usage === true);
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(completion.length) }).end(completion);
}

async function readSmallBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) throw new Error('request body too large for the mock');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

const CREATED = 1_763_683_200;

function chunkEvent(index: number): string {
  const delta = index === 0 ? { role: 'assistant', content: `token${index} ` } : { content: `token${index} ` };
  const chunk = {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: 'gpt-4o-mini',
    system_fingerprint: 'fp_bench',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function closingEvents(includeUsage: boolean, chunks: number): string {
  const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model: 'gpt-4o-mini', system_fingerprint: 'fp_bench' };
  let text = `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] })}\n\n`;
  if (includeUsage) {
    const usage = { prompt_tokens: 8, completion_tokens: chunks, total_tokens: 8 + chunks };
    text += `data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`;
  }
  return `${text}data: [DONE]\n\n`;
}

/** Writes `shape.chunks` content chunks `shape.gapMs` apart (the first at once), then the closing events. */
function streamChunks(response: ServerResponse, shape: MockStreamShape, includeUsage: boolean): void {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  let index = 0;
  let timer: NodeJS.Timeout | undefined;
  response.once('close', () => clearTimeout(timer));
  const writeNext = (): void => {
    if (response.destroyed) return;
    if (index >= shape.chunks) {
      response.end(closingEvents(includeUsage, shape.chunks));
      return;
    }
    response.write(chunkEvent(index));
    index++;
    timer = setTimeout(writeNext, shape.gapMs);
  };
  writeNext();
}
