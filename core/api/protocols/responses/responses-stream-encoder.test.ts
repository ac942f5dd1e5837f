import test from 'ava';
import type { ResponseObject } from '../../../spec/responses.js';
import type { ChatChunkChoice, ChatCompletionChunk } from '../../../spec/unified.js';
import { parseResponsesSse, validateResponsesStream } from '../../../../test/fakes/responses-grammar.js';
import { responseAsEvents } from './responses-events.js';
import { openReasoning } from './responses-reasoning.js';
import { responseShell } from './responses-objects.js';
import { ResponsesStreamEncoder } from './responses-stream-encoder.js';
import type { ToolName } from './responses-to-chat.js';

const chunk = (delta: ChatChunkChoice['delta'], finish: string | null = null): ChatCompletionChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'provider-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const shell = responseShell({ model: 'requested', input: 'x' }, 'resp_test', 1);

function encoder(tools: ReadonlyMap<string, ToolName> = new Map(), include?: string[]) {
  const finished: ResponseObject[] = [];
  const instance = new ResponsesStreamEncoder({
    shell,
    tools,
    provider: 'anthropic',
    include,
    finished: async (response) => {
      finished.push(response);
    },
  });
  return { instance, finished };
}

test('thinking, text and two interleaved tool calls: the grammar holds, items close in order, reasoning is sealed', async (t) => {
  const tools = new Map<string, ToolName>([['ns__read', { name: 'read', kind: 'function', namespace: 'ns' }]]);
  const { instance, finished } = encoder(tools);
  let sse = '';
  sse += instance.chunk(chunk({ role: 'assistant', content: '' }));
  sse += instance.chunk(chunk({ content_blocks: [{ index: 0, type: 'thinking', text: 'Think ' }] }));
  sse += instance.chunk(chunk({ content_blocks: [{ index: 0, type: 'thinking', text: 'hard.' }] }));
  sse += instance.chunk(chunk({ content_blocks: [{ index: 0, type: 'thinking', signature: 'SIG' }] }));
  sse += instance.chunk(chunk({ content: 'Hello ' }));
  sse += instance.chunk(chunk({ content: 'world' }));
  sse += instance.chunk(chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'ns__read', arguments: '{"p":' } }] }));
  sse += instance.chunk(chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'other', arguments: '{}' } }] }));
  sse += instance.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: '"a"}' } }] }));
  sse += instance.chunk(chunk({}, 'tool_calls'));
  sse += await instance.end({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, completion_tokens_details: { reasoning_tokens: 2 } });
  const parsed = parseResponsesSse(sse);
  t.deepEqual(parsed.problems, []);
  const result = validateResponsesStream(parsed.events);
  t.deepEqual(result.problems, []);
  t.is(result.terminal, 'response.completed');
  const output = result.response!.output;
  t.deepEqual(output.map((item: { type: string }) => item.type), ['reasoning', 'message', 'function_call', 'function_call']);
  t.like(output[2], { name: 'read', namespace: 'ns', call_id: 'call_a', arguments: '{"p":"a"}' });
  t.like(output[3], { name: 'other', call_id: 'call_b', arguments: '{}' });
  t.false('encrypted_content' in output[0], 'not shown without include');
  t.deepEqual(result.response!.usage, { input_tokens: 3, input_tokens_details: { cached_tokens: 0 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 7 });
  t.is(result.response!.model, 'provider-model');
  // The stored response keeps the sealed blocks.
  t.deepEqual(openReasoning(finished[0].output[0].encrypted_content, 'anthropic'), [{ type: 'thinking', text: 'Think hard.', signature: 'SIG' }]);
  t.is(openReasoning(finished[0].output[0].encrypted_content, 'bedrock'), undefined, "another provider's envelope is not opened");
});

test('content_filter and length end with response.incomplete and their reason; an error with response.failed', async (t) => {
  for (const [finish, reason] of [
    ['content_filter', 'content_filter'],
    ['length', 'max_output_tokens'],
  ]) {
    const { instance } = encoder();
    const sse = instance.chunk(chunk({ content: 'partial' })) + instance.chunk(chunk({}, finish)) + (await instance.end(undefined));
    const result = validateResponsesStream(parseResponsesSse(sse).events);
    t.deepEqual(result.problems, []);
    t.is(result.terminal, 'response.incomplete');
    t.deepEqual(result.response?.incomplete_details, { reason });
    t.is(result.response?.output[0].status, 'incomplete');
  }
  const { instance } = encoder();
  const sse = instance.chunk(chunk({ content: 'partial' })) + (await instance.error({ message: 'upstream broke', type: 'upstream_error', param: null, code: 'stream_incomplete' }));
  const result = validateResponsesStream(parseResponsesSse(sse).events);
  t.deepEqual(result.problems, []);
  t.is(result.terminal, 'response.failed');
  t.deepEqual(result.response?.error, { code: 'stream_incomplete', message: 'upstream broke' });
});

test('a stream with no chunks at all still opens and ends exactly once', async (t) => {
  const { instance, finished } = encoder();
  const sse = await instance.end(undefined);
  t.is(await instance.end(undefined), '', 'a second end writes nothing');
  const result = validateResponsesStream(parseResponsesSse(sse).events);
  t.deepEqual(result.problems, []);
  t.deepEqual(result.types, ['response.created', 'response.in_progress', 'response.completed']);
  t.is(finished.length, 1);
});

test('a finished response as events (a JSON answer to a streamed request) follows the grammar, include shows the envelope', (t) => {
  const response: ResponseObject = {
    ...shell,
    status: 'completed',
    output: [
      { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'why' }], encrypted_content: 'gw1.x' },
      { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'answer', annotations: [] }] },
      { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'c', name: 'f', arguments: '{"a":1}' },
      { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'd', name: 'g', input: 'raw' },
    ],
  };
  const result = validateResponsesStream(parseResponsesSse(responseAsEvents(response, ['reasoning.encrypted_content'])).events);
  t.deepEqual(result.problems, []);
  t.is(result.response?.output[0].encrypted_content, 'gw1.x');
  t.deepEqual([...result.texts.values()], ['answer']);
  t.deepEqual([...result.summaries.values()], ['why']);
  const hidden = validateResponsesStream(parseResponsesSse(responseAsEvents(response, undefined)).events);
  t.false('encrypted_content' in hidden.response!.output[0]);
});
