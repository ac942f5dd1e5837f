import test from 'ava';
import { maskFlagged } from './entry.js';
import { recordFromText } from './record.js';
import type { LogEntry } from './entry.js';

const entry: LogEntry = {
  id: 'flagged-1',
  time: new Date(0).toISOString(),
  traceId: 'flagged-1',
  method: 'POST',
  path: '/v1/chat/completions',
  operation: 'chat',
  status: 400,
  outcome: 'error',
  streaming: false,
  durationMs: 1,
  gatewayMs: 1,
  metadata: {},
  guardrails: [],
};

test('a flagged value is masked as it is and as JSON spells it inside a string; longer values first', (t) => {
  const value = 'say "hi"\nto jane@example.org';
  const body = JSON.stringify({ messages: [{ content: `before ${value} after` }] });
  t.is(maskFlagged(body, [value]), JSON.stringify({ messages: [{ content: 'before [FLAGGED] after' }] }));
  t.is(maskFlagged('card 4111 1111 1111 1111 and 1111', ['1111', '4111 1111 1111 1111']), 'card [FLAGGED] and [FLAGGED]');
  t.is(maskFlagged('nothing here', undefined), 'nothing here');
  t.is(maskFlagged('nothing here', ['']), 'nothing here');
});

test('a flagged value cut by the body cap leaves none of it: it is masked before the cap', (t) => {
  const card = '4111 1111 1111 1111';
  // The card starts 8 characters before the cap, so a cap taken first would keep "4111 111".
  const text = `${'x'.repeat(92)}${card}${'y'.repeat(100)}`;
  const record = recordFromText(entry, { request: { text }, response: { text: `{"content":"${card}"}` }, secrets: [], flagged: [card] }, 100);
  t.false(String(record.request_body).includes('4111'), String(record.request_body));
  t.is(record.response_body, '{"content":"[FLAGGED]"}');
});

test('a streamed answer is masked once assembled, so a value split across events is found whole', (t) => {
  const events = ['Card 4111 11', '11 1111 1111', ' ok']
    .map((piece) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece } }] })}\n\n`)
    .join('');
  const record = recordFromText(entry, { response: { text: `${events}data: [DONE]\n\n`, stream: true }, secrets: [], flagged: ['4111 1111 1111 1111'] });
  t.true(String(record.response_body).includes('Card [FLAGGED] ok'), String(record.response_body));
});
