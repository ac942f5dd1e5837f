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
