import test from 'ava';
import type { LogEntry } from './entry.js';
import { assembleStream, toLogRecord } from './record.js';

const chunk = (content: string, extra: object = {}) => JSON.stringify({ model: 'gpt-4o', choices: [{ index: 0, delta: { content } }], ...extra });

test('a logged stream is read by the SSE rules: CR line endings and multi-line data events', (t) => {
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
  const carriageReturns = `data: ${chunk('Hel')}\r\rdata: ${chunk('lo')}\r\rdata: ${JSON.stringify({ choices: [], usage })}\r\rdata: [DONE]\r\r`;
  t.deepEqual(JSON.parse(assembleStream(carriageReturns, false)), { stream: true, model: 'gpt-4o', content: 'Hello', usage });
  const multiLine = `data: {"model": "gpt-4o",\ndata:  "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n`;
  t.deepEqual(JSON.parse(assembleStream(multiLine, false)), { stream: true, model: 'gpt-4o', content: 'Hi', finish_reason: 'stop' });
});

test('a stream cut by the capture keeps the events before the cut and says it was truncated', (t) => {
  const text = `data: ${chunk('Hel')}\n\ndata: ${chunk('lo')}\n\ndata: {"model": "gpt-4o", "choi`;
  t.deepEqual(JSON.parse(assembleStream(text, true)), { stream: true, model: 'gpt-4o', content: 'Hello', truncated: true });
});

test('text that is not an SSE stream of JSON is kept as it is', (t) => {
  t.is(assembleStream('plain words\n', false), 'plain words\n');
});

test('a log entry with dropped fields keeps them in its record; without, the record has none', (t) => {
  const entry: LogEntry = {
    id: 'e1', time: new Date(0).toISOString(), traceId: 't', method: 'POST', path: '/v1/messages', operation: 'messages',
    status: 200, outcome: 'ok', streaming: false, durationMs: 1, gatewayMs: 1, metadata: {}, guardrails: [],
  };
  t.deepEqual(toLogRecord({ ...entry, droppedFields: ['top_k'] }, undefined).dropped_fields, ['top_k']);
  t.false('dropped_fields' in toLogRecord(entry, undefined));
});

const sse = (events: object[]) => events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('');

test('a chat stream’s tool calls are kept, their argument deltas joined', (t) => {
  const text = sse([
    { model: 'gpt-4o', choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] } }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }, finish_reason: 'tool_calls' }] },
  ]);
  t.deepEqual(JSON.parse(assembleStream(text, false)), {
    stream: true, model: 'gpt-4o', content: '', finish_reason: 'tool_calls',
    tool_calls: [{ choice: 0, id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
  });
});

test('a Responses stream keeps its text, the final output items, model and usage', (t) => {
  const output = [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there' }] }];
  const text = sse([
    { type: 'response.created', response: { model: 'gpt-5-mini', output: [] } },
    { type: 'response.output_text.delta', delta: 'Hi ' },
    { type: 'response.output_text.delta', delta: 'there' },
    { type: 'response.completed', response: { model: 'gpt-5-mini', output, usage: { input_tokens: 3, output_tokens: 2 } } },
  ]);
  t.deepEqual(JSON.parse(assembleStream(text, false)), { stream: true, model: 'gpt-5-mini', content: 'Hi there', output, usage: { input_tokens: 3, output_tokens: 2 } });
});

test('a Messages stream keeps its text, its content blocks assembled and the stop reason', (t) => {
  const text = sse([
    { type: 'message_start', message: { model: 'claude-x', usage: { input_tokens: 5, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hm.' } },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Lyon' } },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'tu', name: 'f', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '1}' } },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
    { type: 'message_stop' },
  ]);
  t.deepEqual(JSON.parse(assembleStream(text, false)), {
    stream: true, model: 'claude-x', content: 'Lyon', finish_reason: 'tool_use',
    content_blocks: [{ type: 'thinking', thinking: 'Hm.' }, { type: 'text', text: 'Lyon' }, { type: 'tool_use', id: 'tu', name: 'f', input: { a: 1 } }],
    usage: { input_tokens: 5, output_tokens: 9 },
  });
});

test('a request body the gateway rewrote is logged as sent on, serialised, capped and redacted', (t) => {
  const entry: LogEntry = {
    id: 'e2', time: new Date(0).toISOString(), traceId: 't', method: 'POST', path: '/v1/chat/completions', operation: 'chat',
    status: 200, outcome: 'ok', streaming: false, durationMs: 1, gatewayMs: 1, metadata: {}, guardrails: [],
  };
  const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Write to [EMAIL] with key sk-abcdefghijklmnop0123' }] };
  const record = toLogRecord(entry, { request: { json: body }, secrets: [] });
  t.deepEqual(JSON.parse(record.request_body!), { ...body, messages: [{ role: 'user', content: 'Write to [EMAIL] with key [REDACTED]' }] });
  const long = toLogRecord(entry, { request: { json: { input: 'x'.repeat(5000) } }, secrets: [] }, 1024);
  t.regex(long.request_body!, /…\[truncated, \d+ in all\]$/);
});
