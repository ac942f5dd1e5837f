import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import test from 'ava';
import { MemoryBudget } from '../http/memory-budget.js';
import type { ForwardSlice, GatewayContext, GatewayResponse, TransformSlice } from '../pipeline/context.js';
import * as pipelineResponse from '../pipeline/response.js';
import type { ProviderPlugin, StreamingAdapter } from '../spec/provider.js';
import type { Usage } from '../spec/unified.js';
import { type ProtocolAnswer, renderAnswer, respondWithProtocol, SSE_HEADERS } from './protocol-respond.js';
import type { StreamEncoder } from './stream-relay.js';

// A toy protocol (not one of the gateway's): a "shout" answer is one text, its client side the text
// in capitals. It shows what a protocol declares (adapter, encoder, whole answer, rendering, headers)
// and that respondWithProtocol alone does the reading, relaying and rendering.

interface Shout {
  text: string;
}

interface ShoutChunk {
  choices: Array<{ index: number; text: string; finish_reason: string | null }>;
  usage?: Usage | null;
  model?: string;
}

const adapter: StreamingAdapter<{ model: string }, Shout, ShoutChunk> = {
  toUpstream: () => ({ url: 'http://127.0.0.1:1/shout', method: 'POST', headers: {}, body: '' }),
  fromUpstream: (body) => body as Shout,
  stream: {
    createMapper: () => ({
      map(event) {
        if (event.data === '[DONE]') return { done: true };
        return { chunks: [{ choices: [{ index: 0, text: (JSON.parse(event.data) as Shout).text, finish_reason: null }], usage: null }] };
      },
    }),
  },
};

const shoutEncoder = (): StreamEncoder<ShoutChunk> => ({
  chunk: (chunk) => chunk.choices.map((choice) => `event: shout\ndata: ${choice.text.toUpperCase()}\n\n`).join(''),
  end: () => 'event: end\ndata: {}\n\n',
  error: (error) => `event: error\ndata: ${error.message}\n\n`,
});

const provider = { id: 'toy', operations: {} } as unknown as ProviderPlugin;

function contextFor(streaming: boolean): GatewayContext & { transform: TransformSlice } {
  return {
    traceId: 'trace-1',
    startedAt: 0,
    operation: 'chat',
    incoming: { method: 'POST', path: '/v1/shout', search: '', headers: {} },
    signal: new AbortController().signal,
    metadata: {},
    strict: false,
    request: { streaming, body: { model: 'm' } },
    auth: { target: { baseUrl: 'http://127.0.0.1:1' } },
    transform: { upstreamRequest: { url: 'http://127.0.0.1:1/shout', method: 'POST', headers: {}, body: '' } },
  } as unknown as GatewayContext & { transform: TransformSlice };
}

const answer = (contentType: string, body: string): ForwardSlice => ({
  origin: 'http://127.0.0.1:1',
  status: 200,
  headers: { 'content-type': contentType },
  body: Readable.from([Buffer.from(body)]),
  sentAt: 0,
  headersAt: 0,
  memory: new MemoryBudget(1 << 20).lease(),
  maxAnswerBytes: 1 << 20,
});

function shout(context: GatewayContext, finished: string[]): ProtocolAnswer<{ model: string }, Shout, ShoutChunk, ShoutChunk, Shout> {
  return {
    adapter,
    sent: { model: 'm' },
    target: { baseUrl: 'http://127.0.0.1:1' } as never,
    headers: { 'x-toy': 'declared' },
    relay: (mapper) => ({ mapper, encoder: shoutEncoder() }),
    async whole(mapped) {
      finished.push(mapped.text);
      (context.transform as TransformSlice).model = 'toy-model';
      return mapped.text === 'keep' ? mapped : { text: mapped.text.toUpperCase() };
    },
    render: { events: (whole) => `event: shout\ndata: ${whole.text.toUpperCase()}\n\nevent: end\ndata: {}\n\n`, json: (whole) => whole },
  };
}

async function text(response: GatewayResponse): Promise<string> {
  const body = response.body;
  if (body && 'stream' in body) {
    const parts: Buffer[] = [];
    for await (const part of body.stream) parts.push(part as Buffer);
    return Buffer.concat(parts).toString('utf8');
  }
  if (body && 'bytes' in body) return Buffer.from(body.bytes).toString('utf8');
  throw new Error('not a text body');
}

test("a streamed answer is relayed through the protocol's encoder, with the SSE headers and the protocol's own", async (t) => {
  const context = contextFor(true);
  const finished: string[] = [];
  const forward = answer('text/event-stream', 'data: {"text":"hi"}\n\ndata: {"text":"there"}\n\ndata: [DONE]\n\n');
  const response = await respondWithProtocol(context, provider, forward, shout(context, finished));
  t.deepEqual(response.headers, { ...SSE_HEADERS, 'x-toy': 'declared' });
  t.is(await text(response), 'event: shout\ndata: HI\n\nevent: shout\ndata: THERE\n\nevent: end\ndata: {}\n\n');
  t.deepEqual(finished, [], 'a relayed stream is not a whole answer');
  t.is(typeof forward.endedAt, 'number');
});

test("a JSON answer to a streamed request is finished by the protocol and rendered as its events", async (t) => {
  const context = contextFor(true);
  const finished: string[] = [];
  const response = await respondWithProtocol(context, provider, answer('application/json', '{"text":"hi"}'), shout(context, finished));
  t.deepEqual(finished, ['hi']);
  t.is(context.transform.model, 'toy-model');
  t.deepEqual(response.headers, { ...SSE_HEADERS, 'x-toy': 'declared' });
  t.is(await text(response), 'event: shout\ndata: HI\n\nevent: end\ndata: {}\n\n');
});

test("a plain answer is JSON: the upstream's bytes as received when the protocol left it unchanged, else the new object", async (t) => {
  const context = contextFor(false);
  const bytes = '{ "text" : "keep" }';
  const kept = await respondWithProtocol(context, provider, answer('application/json', bytes), shout(context, []));
  t.deepEqual(kept.headers, { 'x-toy': 'declared' });
  const keptBody = kept.body as { json: unknown; serialised?: Uint8Array };
  t.deepEqual(keptBody.json, { text: 'keep' });
  t.is(Buffer.from(keptBody.serialised ?? []).toString('utf8'), bytes);

  const changed = await respondWithProtocol(context, provider, answer('application/json', '{"text":"hi"}'), shout(context, []));
  t.deepEqual(changed.body, { json: { text: 'HI' } });
});

test('renderAnswer (a cache replay) renders without upstream bytes, SSE headers only when the request streams', async (t) => {
  const render = { events: (whole: Shout) => `data: ${whole.text}\n\n`, json: (whole: Shout) => ({ shout: whole.text }) };
  t.deepEqual(renderAnswer(contextFor(false), { text: 'a' }, render), { status: 200, headers: {}, body: { json: { shout: 'a' } } });
  const streamed = renderAnswer(contextFor(true), { text: 'a' }, render);
  t.deepEqual(streamed.headers, { ...SSE_HEADERS });
  t.is(await text(streamed), 'data: a\n\n');
});

/** Every `.ts` file under `folder` (tests left out), relative to the repository root. */
function sources(folder: string): string[] {
  return readdirSync(join(process.cwd(), folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => join(folder, name));
}

test('one respond path: only protocol-respond.ts relays a stream or reads a streamable answer whole; no protocol copies the template', (t) => {
  const relaying = sources('core').filter((file) => /\brelayStream[<(]/.test(readFileSync(join(process.cwd(), file), 'utf8')) && !file.endsWith('stream-relay.ts'));
  t.deepEqual(relaying, [join('core', 'api', 'protocol-respond.ts')]);
  const readingWhole = sources('core').filter((file) => /\breadUpstreamJson\(/.test(readFileSync(join(process.cwd(), file), 'utf8')));
  // The JSON-only operations' path (embeddings, images, models) and the one respond path; `operation.ts` defines it.
  t.deepEqual(readingWhole.sort(), [join('core', 'api', 'json-response.ts'), join('core', 'api', 'operation.ts'), join('core', 'api', 'protocol-respond.ts')]);
});

test("one name per meaning: an operation's `respond` makes the answer, the pipeline's one writer is `writeResponse`", (t) => {
  t.deepEqual(Object.keys(pipelineResponse).sort(), ['tapStream', 'writeResponse']);
});
