import test from 'ava';
import type { ChunkJudge } from '../guardrails/output/index.js';
import { SseDecoder } from '../http/sse.js';
import type { ChatCompletionChunk, ErrorBody } from '../spec/unified.js';
import { chatStreamShape } from './chat-stream.js';
import { relayStream } from './stream-relay.js';

/** An upstream body of SSE reads that records how the relay leaves it. */
function upstreamOf(reads: string[]) {
  const seen = { read: 0, returned: false };
  const iterator: AsyncIterableIterator<Uint8Array> = {
    [Symbol.asyncIterator]: () => iterator,
    next: async () => (seen.read < reads.length ? { done: false, value: Buffer.from(reads[seen.read++]) } : { done: true, value: undefined }),
    return: async () => {
      seen.returned = true;
      return { done: true, value: undefined };
    },
  };
  return { iterator, seen };
}

const chunk = (content: string): ChatCompletionChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta: { content }, finish_reason: null }],
});

const data = (payload: string) => `data: ${payload}\n\n`;

async function relayed(reads: string[], judge?: ChunkJudge<ChatCompletionChunk>) {
  const { iterator, seen } = upstreamOf(reads);
  const ended: Array<ErrorBody | undefined> = [];
  const stream = relayStream({
    upstream: iterator,
    origin: 'http://127.0.0.1',
    decoder: new SseDecoder(),
    mapper: { map: (event) => (event.data === '[DONE]' ? { done: true } : { chunks: [chunk(event.data)] }) },
    shape: chatStreamShape,
    includeUsage: false,
    strict: true,
    signal: new AbortController().signal,
    provider: 'test',
    ...(judge ? { judge } : {}),
    observe: { usage() {}, model() {}, firstToken() {}, end: (error) => ended.push(error) },
  });
  let text = '';
  for await (const piece of stream) text += String(piece);
  await new Promise((resolve) => setImmediate(resolve));
  const contents = text
    .split('\n\n')
    .filter((event) => event.startsWith('data: {'))
    .map((event) => JSON.parse(event.slice(6)) as { choices?: ChatCompletionChunk['choices']; error?: ErrorBody })
    .map((event) => event.error?.code ?? event.choices?.[0]?.delta.content);
  return { text, contents, seen, ended };
}

test('answered: the client stream ends at the end marker and the rest of the upstream body is drained, not cancelled', async (t) => {
  const { text, contents, seen, ended } = await relayed([data('a'), data('b') + data('[DONE]'), ': trailing\n\n', ': more\n\n']);
  t.deepEqual(contents, ['a', 'b']);
  t.true(text.endsWith('data: [DONE]\n\n'));
  t.is(seen.read, 4);
  t.false(seen.returned);
  t.deepEqual(ended, [undefined]);
});

test('cut: a judge that stops the stream ends it with [DONE] and cancels the upstream', async (t) => {
  const judge: ChunkJudge<ChatCompletionChunk> = {
    push: async (pushed) => ({ chunks: [pushed], stop: pushed.choices[0].delta.content === 'stop' }),
    end: async () => ({ chunks: [] }),
  };
  const { text, contents, seen } = await relayed([data('a'), data('stop') + data('never'), data('[DONE]')], judge);
  t.deepEqual(contents, ['a', 'stop']);
  t.true(text.endsWith('data: [DONE]\n\n'));
  t.is(seen.read, 2);
  t.true(seen.returned);
});

test('answered with a judge: what it held back is released before [DONE]', async (t) => {
  const held: ChatCompletionChunk[] = [];
  const judge: ChunkJudge<ChatCompletionChunk> = {
    push: async (pushed) => {
      held.push(pushed);
      return { chunks: [] };
    },
    end: async () => ({ chunks: held }),
  };
  const { contents } = await relayed([data('a'), data('b'), data('[DONE]')], judge);
  t.deepEqual(contents, ['a', 'b']);
});

test('failed: an upstream that ends without its end marker ends the client stream with an error event and no [DONE]', async (t) => {
  const { text, contents, seen, ended } = await relayed([data('a')]);
  t.deepEqual(contents, ['a', 'stream_incomplete']);
  t.false(text.includes('[DONE]'));
  t.true(seen.returned);
  t.is(ended[0]?.code, 'stream_incomplete');
});
