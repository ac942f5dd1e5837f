import test from 'ava';
import { GatewayError } from '../../../errors.js';
import type { ResponsesRequest } from '../../../spec/responses.js';
import { sealReasoning } from './responses-reasoning.js';
import { toChatRequest } from './responses-to-chat.js';

const options = { provider: 'anthropic', builtInTools: 'drop' as const };

test('a reasoning item, an assistant message and calls join one assistant turn; outputs become tool messages', (t) => {
  const request: ResponsesRequest = {
    model: 'm',
    input: [
      { role: 'user', content: 'q' },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: sealReasoning('anthropic', [{ type: 'thinking', text: 't', signature: 's' }]) },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{"x":1}' },
      { type: 'function_call_output', call_id: 'c1', output: 'one' },
      { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'two' }] },
      { type: 'web_search_call', id: 'ws_1', status: 'completed' },
    ],
  };
  const { chat, dropped } = toChatRequest(request, [], options);
  t.deepEqual(chat.messages, [
    { role: 'user', content: 'q' },
    {
      role: 'assistant',
      content: 'Checking.',
      content_blocks: [{ type: 'thinking', text: 't', signature: 's' }],
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'c2', type: 'function', function: { name: 'g', arguments: '{"x":1}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'one' },
    { role: 'tool', tool_call_id: 'c2', content: 'two' },
  ]);
  t.deepEqual(dropped, ['input[7]']);
  // The same envelope is not replayed to another provider.
  const elsewhere = toChatRequest(request, [], { ...options, provider: 'bedrock' });
  t.false('content_blocks' in elsewhere.chat.messages[1]);
});

test('history comes first, then instructions-less input; stream asks for usage; settings map to chat fields', (t) => {
  const { chat } = toChatRequest(
    { model: 'm', input: 'now', stream: true, max_output_tokens: 50, temperature: 0.2, top_p: 0.9, user: 'u1', reasoning: { effort: 'high' }, text: { format: { type: 'json_object' } }, tool_choice: 'required', tools: [{ type: 'function', name: 'f', parameters: null }], parallel_tool_calls: false },
    [{ role: 'user', content: 'before' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'earlier' }] }],
    options,
  );
  t.deepEqual(chat.messages.map((message) => message.content), ['before', 'earlier', 'now']);
  t.like(chat, { stream: true, stream_options: { include_usage: true }, max_tokens: 50, temperature: 0.2, top_p: 0.9, user: 'u1', reasoning_effort: 'high', response_format: { type: 'json_object' }, tool_choice: 'required', parallel_tool_calls: false });
  t.deepEqual(chat.tools, [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }]);
});

test('allowed_tools narrows the tool list; a built-in tool_choice falls back to auto and is logged dropped', (t) => {
  const tools = [
    { type: 'function', name: 'a', parameters: {} },
    { type: 'function', name: 'b', parameters: {} },
  ];
  const allowed = toChatRequest({ model: 'm', input: 'x', tools, tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }] } }, [], options);
  t.deepEqual((allowed.chat.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name), ['b']);
  t.is(allowed.chat.tool_choice, 'required');
  const builtIn = toChatRequest({ model: 'm', input: 'x', tools: [...tools, { type: 'web_search' }], tool_choice: { type: 'web_search' } }, [], options);
  t.is(builtIn.chat.tool_choice, 'auto');
  t.deepEqual(builtIn.dropped, ['tools[2]', 'tool_choice']);
  t.deepEqual(builtIn.droppedTools, ['web_search']);
});

test('refusals name the field: file ids and URLs, item references, native-only fields, refused built-in tools', (t) => {
  const param = (request: ResponsesRequest, refuse = false) => {
    const error = t.throws(() => toChatRequest(request, [], { ...options, builtInTools: refuse ? 'refuse' : 'drop' }));
    return (error as GatewayError).body.param;
  };
  t.is(param({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }), 'input[0].content[0].file_id');
  t.is(param({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://x/a.pdf' }] }] }), 'input[0].content[0].file_url');
  t.is(param({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] }), 'input[0].type');
  t.is(param({ model: 'm', input: 'x', prompt: { id: 'pmpt_1' } }), 'prompt');
  t.is(param({ model: 'm', input: 'x', tools: [{ type: 'code_interpreter' }] }, true), 'tools[0].type');
});
