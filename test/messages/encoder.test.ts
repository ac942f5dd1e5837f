import test from 'ava';
import { messageAsEvents } from '../../core/api/protocols/messages/message-events.js';
import { messageFromChat } from '../../core/api/protocols/messages/from-chat.js';
import { MessagesStreamEncoder } from '../../core/api/protocols/messages/stream-encoder.js';
import { chatRequestOf } from '../../core/api/protocols/messages/to-chat.js';
import type { ChatChunkChoice, ChatCompletionChunk, ChatResponse } from '../../core/spec/index.js';
import { checkMessagesStream } from '../fakes/messages-stream.js';

/** Unit tests of the Messages protocol layer's pure pieces: every stream they write is checked against the grammar. */

const chunk = (delta: ChatChunkChoice['delta'], finish: string | null = null): ChatCompletionChunk => ({
  id: 'chatcmpl-7',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const encode = (chunks: ChatCompletionChunk[], usage = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 }): string => {
  const encoder = new MessagesStreamEncoder('requested');
  return chunks.map((value) => encoder.chunk(value)).join('') + encoder.end(usage, chunks.at(-1));
};

test('thinking with its signature, redacted thinking, text and two tool calls become blocks in order', (t) => {
  const raw = encode([
    chunk({ role: 'assistant', content: '' }),
    chunk({ content_blocks: [{ index: 0, type: 'thinking', text: 'Hmm, ' }] }),
    chunk({ content_blocks: [{ index: 0, type: 'thinking', text: 'two tools.' }] }),
    chunk({ content_blocks: [{ index: 0, type: 'thinking', signature: 'sig-1' }] }),
    chunk({ content_blocks: [{ index: 1, type: 'redacted_thinking', data: 'opaque' }] }),
    chunk({ content: 'Checking ' }),
    chunk({ content: 'both.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '{}' } }] }),
    chunk({}, 'tool_calls'),
  ]);
  const { message } = checkMessagesStream(raw);
  t.deepEqual(message.content, [
    { type: 'thinking', thinking: 'Hmm, two tools.', signature: 'sig-1' },
    { type: 'redacted_thinking', data: 'opaque' },
    { type: 'text', text: 'Checking both.' },
    { type: 'tool_use', id: 'call_a', name: 'a', input: { x: 1 } },
    { type: 'tool_use', id: 'call_b', name: 'b', input: {} },
  ]);
  t.is(message.stop_reason, 'tool_use');
  t.is(message.id, 'msg_chatcmpl-7');
  t.deepEqual(message.usage, { input_tokens: 10, output_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
});

test('finish reasons map to stop reasons; a content_filter cut is a refusal; usage arrives after the finish', (t) => {
  for (const [finish, stop] of [
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['content_filter', 'refusal'],
  ]) {
    const { message } = checkMessagesStream(encode([chunk({ content: 'x' }), chunk({}, finish)]));
    t.is(message.stop_reason, stop, finish);
  }
  const cached = checkMessagesStream(encode([chunk({ content: 'x' }), chunk({}, 'stop')], { prompt_tokens: 100, completion_tokens: 2, total_tokens: 102, prompt_tokens_details: { cached_tokens: 60 } } as never));
  t.like(cached.message.usage, { input_tokens: 40, cache_read_input_tokens: 60, output_tokens: 2 });
});

test('a stream with no chunk at all still opens and closes a message; an error ends it with an error event', (t) => {
  const empty = new MessagesStreamEncoder('requested');
  const checked = checkMessagesStream(empty.end(undefined, undefined));
  t.is(checked.message.model, 'requested');
  t.deepEqual(checked.message.content, []);
  const failing = new MessagesStreamEncoder('m');
  const raw = failing.chunk(chunk({ content: 'half' })) + failing.error({ message: 'gone', type: 'upstream_error', param: null, code: 'stream_incomplete' });
  const failed = checkMessagesStream(raw);
  t.deepEqual(failed.error, { type: 'api_error', message: 'gone' });
  t.is(failing.chunk(chunk({ content: 'more' })), '', 'nothing after the end');
});

test('a whole Message as events (a JSON answer to a streamed request) passes the grammar and adds up to itself', (t) => {
  const message = {
    id: 'msg_1',
    type: 'message' as const,
    role: 'assistant' as const,
    model: 'm',
    content: [
      { type: 'thinking', thinking: 'why', signature: 's' },
      { type: 'text', text: 'because' },
      { type: 'tool_use', id: 't', name: 'n', input: { a: [1, 2] } },
      { type: 'redacted_thinking', data: 'd' },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 5, cache_read_input_tokens: 1, cache_creation_input_tokens: 0 },
  };
  const checked = checkMessagesStream(messageAsEvents(message));
  t.deepEqual(checked.message, message);
});

test('a chat answer becomes a Message: thinking blocks, text, tool calls (invalid JSON arguments kept under "arguments")', (t) => {
  const response: ChatResponse = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        logprobs: null,
        message: {
          role: 'assistant',
          content: 'Calling.',
          content_blocks: [{ type: 'thinking', text: 'plan', signature: 'sig' } as { type: string; text: string }],
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            { id: 'c2', type: 'function', function: { name: 'g', arguments: 'not json' } },
          ],
        },
      },
    ],
    usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
  };
  t.deepEqual(messageFromChat(response, 'requested'), {
    id: 'msg_chatcmpl-1',
    type: 'message',
    role: 'assistant',
    model: 'gpt',
    content: [
      { type: 'thinking', thinking: 'plan', signature: 'sig' },
      { type: 'text', text: 'Calling.' },
      { type: 'tool_use', id: 'c1', name: 'f', input: { a: 1 } },
      { type: 'tool_use', id: 'c2', name: 'g', input: { arguments: 'not json' } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  });
});

test('translation to chat: extensions decide thinking and top_k; structured output maps; tool results split out', (t) => {
  const request = {
    model: 'm',
    max_tokens: 100,
    top_k: 3,
    thinking: { type: 'enabled', budget_tokens: 2000 },
    output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
    tool_choice: { type: 'tool', name: 'f' },
    tools: [{ name: 'f', input_schema: { type: 'object' }, strict: true }],
    messages: [
      { role: 'user' as const, content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'r1' }, { type: 'image', source: { type: 'url', url: 'https://x/i.png' } }], is_error: true }] },
    ],
  };
  const thinking = chatRequestOf(request, 'p', ['thinking', 'top_k']);
  t.deepEqual(thinking.request, {
    model: 'm',
    max_tokens: 100,
    top_k: 3,
    thinking: { type: 'enabled', budget_tokens: 2000 },
    response_format: { type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object' }, strict: true } },
    tool_choice: { type: 'function', function: { name: 'f' } },
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }],
    messages: [
      { role: 'tool', tool_call_id: 't1', content: 'r1' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/i.png' } }] },
    ],
  });
  t.deepEqual(thinking.dropped, ['tool_result.is_error']);
  const plain = chatRequestOf(request, 'p', []);
  t.false('thinking' in plain.request);
  t.false('top_k' in plain.request);
  t.deepEqual([...plain.dropped].sort(), ['thinking', 'tool_result.is_error', 'top_k']);
});
