import type { ServerResponse } from 'node:http';
import type { RecordedRequest } from '../fakes/openai-fake.js';

/** Usage every echo answer reports (gpt-4o-mini: $0.15 in, $0.60 out per million tokens). */
export const ECHO_USAGE = { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 };
/** 20 × 0.15 / 1e6 + 10 × 0.60 / 1e6: what one echo answer costs at gpt-4o-mini's price. */
export const ECHO_COST_USD = 0.000009;

const json = (response: ServerResponse, status: number, body: unknown) => {
  const bytes = Buffer.from(JSON.stringify(body));
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(bytes.length) }).end(bytes);
};

/** The text of a chat request's last message, or of a completion's prompt. */
function askedText(body: Record<string, any>): string {
  if (Array.isArray(body.messages)) return String(body.messages.at(-1)?.content ?? '');
  return Array.isArray(body.prompt) ? body.prompt.join(' ') : String(body.prompt ?? '');
}

/**
 * A deterministic embedding: the words of the text (lower case, punctuation dropped) hashed into
 * 64 dimensions, each adding ±1. Texts with the same words have similarity 1 whatever their order,
 * case and punctuation; one word in forty changed still leaves them above 0.95 (a near miss).
 */
export function bagOfWords(text: string, dimensions = 64): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let hash = 2166136261;
    for (const character of word) hash = Math.imul(hash ^ character.charCodeAt(0), 16777619) >>> 0;
    vector[hash % dimensions] += hash & 0x80000000 ? -1 : 1;
  }
  return vector;
}

/**
 * An OpenAI-shaped upstream whose every answer is new: chat and text completions answer
 * `Answer <n> to: <text>` (n counts the upstream's answers, so a served copy is told from a fresh
 * one), plain or streamed (role chunk, the text in three pieces, the finish chunk, the usage chunk
 * when asked for, `[DONE]`), with {@link ECHO_USAGE}; embeddings answer {@link bagOfWords}. A text
 * containing `fail-500` gets a 500, `filtered` a `content_filter` finish.
 */
export function echoUpstream() {
  let answers = 0;
  const handler = (request: RecordedRequest, response: ServerResponse) => {
    const path = request.url.split('?')[0];
    const body = request.json();
    if (path === '/v1/embeddings') {
      const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
      return json(response, 200, {
        object: 'list',
        model: body.model,
        data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: bagOfWords(String(input)) })),
        usage: { prompt_tokens: 8, total_tokens: 8 },
      });
    }
    const text = askedText(body);
    if (text.includes('fail-500')) return json(response, 500, { error: { message: 'The server had an error', type: 'server_error', param: null, code: null } });
    const content = `Answer ${++answers} to: ${text}`;
    const finish = text.includes('filtered') ? 'content_filter' : 'stop';
    const chat = path === '/v1/chat/completions';
    const identity = { id: `cmpl-${answers}`, object: chat ? 'chat.completion' : 'text_completion', created: 1741569952, model: body.model };
    if (!body.stream) {
      const choice = chat ? { index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: finish } : { index: 0, text: content, logprobs: null, finish_reason: finish };
      return json(response, 200, { ...identity, choices: [choice], usage: ECHO_USAGE });
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const object = chat ? 'chat.completion.chunk' : 'text_completion';
    const send = (choices: unknown[], extra: Record<string, unknown> = {}) => response.write(`data: ${JSON.stringify({ ...identity, object, choices, ...extra })}\n\n`);
    const piece = (delta: string, finishReason: string | null = null) =>
      chat ? { index: 0, delta: delta === '' && finishReason === null ? { role: 'assistant', content: '' } : finishReason ? {} : { content: delta }, logprobs: null, finish_reason: finishReason } : { index: 0, text: delta, logprobs: null, finish_reason: finishReason };
    if (chat) send([piece('')]);
    const third = Math.ceil(content.length / 3);
    for (let start = 0; start < content.length; start += third) send([piece(content.slice(start, start + third))]);
    send([piece('', finish)]);
    if (body.stream_options?.include_usage) send([], { usage: ECHO_USAGE });
    response.end('data: [DONE]\n\n');
  };
  return { handler, answers: () => answers };
}

/** The SSE events of a streamed answer's text, parsed (`[DONE]` kept as the string). */
export function sseEvents(text: string): Array<Record<string, any> | '[DONE]'> {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length))
    .map((data) => (data === '[DONE]' ? '[DONE]' : JSON.parse(data)));
}
