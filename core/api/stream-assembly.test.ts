import test from 'ava';
import type { ChatCompletionChunk, CompletionResponse } from '../spec/unified.js';
import { ChatAssembly, CompletionAssembly } from './stream-assembly.js';

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): ChatCompletionChunk =>
  ({ id: 'c1', object: 'chat.completion.chunk', created: 7, model: 'm', system_fingerprint: 'fp', choices, ...extra }) as ChatCompletionChunk;

test('a chat stream adds up to the completion: text, tool calls by index, logprobs, several choices, usage', (t) => {
  const assembly = new ChatAssembly();
  assembly.push(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }, { index: 1, delta: { role: 'assistant', content: null }, finish_reason: null }]));
  assembly.push(chunk([{ index: 0, delta: { content: 'Hel' }, logprobs: { content: [{ token: 'Hel', logprob: -1 }] }, finish_reason: null }]));
  assembly.push(chunk([{ index: 0, delta: { content: 'lo' }, logprobs: { content: [{ token: 'lo', logprob: -2 }] }, finish_reason: null }]));
  assembly.push(chunk([{ index: 1, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a"' } }] }, finish_reason: null }]));
  assembly.push(chunk([{ index: 1, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish_reason: null }]));
  assembly.push(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }, { index: 1, delta: {}, finish_reason: 'tool_calls' }]));
  t.is(assembly.result()?.usage, undefined, 'no usage before the usage chunk');
  assembly.push(chunk([], { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }));
  t.deepEqual(assembly.result(), {
    id: 'c1',
    object: 'chat.completion',
    created: 7,
    model: 'm',
    system_fingerprint: 'fp',
    choices: [
      { index: 0, message: { role: 'assistant', content: 'Hello' }, logprobs: { content: [{ token: 'Hel', logprob: -1 }, { token: 'lo', logprob: -2 }] }, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a":1}' } }] }, logprobs: null, finish_reason: 'tool_calls' },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
  });
});

test('a stream whose choice never finished makes no answer', (t) => {
  const assembly = new ChatAssembly();
  t.is(assembly.result(), undefined);
  assembly.push(chunk([{ index: 0, delta: { content: 'cut' }, finish_reason: null }]));
  t.is(assembly.result(), undefined);
});

test('a text completion stream adds up per choice, with its logprobs arrays joined', (t) => {
  const assembly = new CompletionAssembly();
  const piece = (text: string, finish: string | null, tokens: string[]) =>
    ({ id: 't1', object: 'text_completion', created: 1, model: 'i', choices: [{ index: 0, text, finish_reason: finish, logprobs: { tokens, token_logprobs: tokens.map(() => -1) } }] }) as CompletionResponse;
  assembly.push(piece('Hi', null, ['Hi']));
  assembly.push(piece(' there', 'length', [' there']));
  t.deepEqual(assembly.result(), {
    id: 't1',
    object: 'text_completion',
    created: 1,
    model: 'i',
    choices: [{ index: 0, text: 'Hi there', logprobs: { tokens: ['Hi', ' there'], token_logprobs: [-1, -1] }, finish_reason: 'length' }],
  });
});
