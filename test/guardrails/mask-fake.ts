import type { ServerResponse } from 'node:http';
import type { FakeHandler, RecordedRequest } from '../fakes/openai-fake.js';

/**
 * A chat model for the masking tests: it answers with what the test scripts (text pieces, or a tool
 * call whose arguments come in pieces), plain or streamed as the request asks, and writes every
 * request it saw in `seen` so a test can prove the real values never left the gateway.
 */
export interface MaskScript {
  /** The answer's text, in the pieces a stream sends (joined for a plain answer). */
  pieces: readonly string[];
  /** When set, the answer is a call of this tool, its arguments in `pieces`. */
  tool?: string;
  /** When set, a 400 error whose message quotes the last message the model was sent (as some providers do). */
  error?: boolean;
}

export interface MaskModel {
  readonly handler: FakeHandler;
  /** The next answers' script. */
  script: MaskScript;
  /** The raw bodies of the requests received. */
  readonly seen: string[];
}

const identity = { id: 'chatcmpl-mask', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o' };
const sse = (choice: object) => `data: ${JSON.stringify({ ...identity, choices: [choice], usage: null })}\n\n`;

export function maskModel(): MaskModel {
  const model: MaskModel = {
    script: { pieces: ['ok'] },
    seen: [],
    handler: (request: RecordedRequest, response: ServerResponse) => {
      model.seen.push(request.body.toString());
      const body = request.json();
      const { pieces, tool, error } = model.script;
      if (error) {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: `Cannot answer: ${JSON.stringify(body.messages?.at(-1)?.content)}`, type: 'invalid_request_error', param: null, code: null } }));
        return;
      }
      if (request.url.includes('/images/')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ created: 1, data: [{ url: 'https://images.example/1.png', revised_prompt: pieces.join('') }] }));
        return;
      }
      if (!request.url.includes('/chat/')) return completion(response, pieces, body.stream === true);
      if (!body.stream) return plain(response, pieces.join(''), tool);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      if (tool) {
        response.write(sse({ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: tool, arguments: '' } }] }, finish_reason: null }));
        for (const piece of pieces) response.write(sse({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null }));
        response.write(sse({ index: 0, delta: {}, finish_reason: 'tool_calls' }));
      } else {
        response.write(sse({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }));
        for (const piece of pieces) response.write(sse({ index: 0, delta: { content: piece }, finish_reason: null }));
        response.write(sse({ index: 0, delta: {}, finish_reason: 'stop' }));
      }
      if (body.stream_options?.include_usage) {
        response.write(`data: ${JSON.stringify({ ...identity, choices: [], usage: { prompt_tokens: 9, completion_tokens: pieces.length, total_tokens: 9 + pieces.length } })}\n\n`);
      }
      response.end('data: [DONE]\n\n');
    },
  };
  return model;
}

/** A text completion (`/v1/completions`): `text`, plain or streamed. */
function completion(response: ServerResponse, pieces: readonly string[], stream: boolean): void {
  const base = { id: 'cmpl-mask', object: 'text_completion', created: 1, model: 'gpt-3.5-turbo-instruct' };
  if (!stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ...base, choices: [{ index: 0, text: pieces.join(''), logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 } }));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const event = (choice: object) => `data: ${JSON.stringify({ ...base, choices: [choice] })}\n\n`;
  for (const text of pieces) response.write(event({ index: 0, text, logprobs: null, finish_reason: null }));
  response.write(event({ index: 0, text: '', logprobs: null, finish_reason: 'stop' }));
  response.end('data: [DONE]\n\n');
}

function plain(response: ServerResponse, text: string, tool: string | undefined): void {
  const message = tool
    ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: tool, arguments: text } }] }
    : { role: 'assistant', content: text };
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      id: 'chatcmpl-mask',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, message, finish_reason: tool ? 'tool_calls' : 'stop', logprobs: null }],
      usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 },
    }),
  );
}

/** A seeded generator (mulberry32), so that a failing split can be replayed from its round. */
export function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** `text` cut at up to `most` random places (empty pieces dropped: a chat delta of "" is sent by the fake's first chunk already). */
export function randomSplit(text: string, next: () => number, most = 12): string[] {
  const cuts = Array.from({ length: 1 + Math.floor(next() * most) }, () => 1 + Math.floor(next() * (text.length - 1))).sort((left, right) => left - right);
  const pieces: string[] = [];
  let position = 0;
  for (const cut of cuts) {
    if (cut > position) pieces.push(text.slice(position, cut));
    position = Math.max(position, cut);
  }
  pieces.push(text.slice(position));
  return pieces;
}

/** The JSON `data:` payloads of an SSE text, in order (`[DONE]` left out). */
export function sseData(raw: string): Array<Record<string, any>> {
  return raw
    .split('\n\n')
    .flatMap((event) => event.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)))
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data));
}
