import test from 'ava';
import config from '../../gateway.config.js';
import { pii } from '../../plugins/guardrails/index.js';
import { jsonOutput } from '../../plugins/guardrails/json-output/index.js';
import { loggedOnce, traceId } from '../harness.js';
import { askStream, events, policyGateway, rawStream, streaming } from './helpers.js';

const CARD = '4111 1111 1111 1111';

/** 50 word chunks, the 30th carrying a card number, 20 ms apart. */
function wordsWithCardAt30(): string[] {
  return Array.from({ length: 50 }, (_unused, index) => (index === 29 ? ` my card is ${CARD} ok.` : ` word${index + 1}${index % 7 === 6 ? '.' : ''}`));
}

const streamThrough = (url: string, customHost: string, trace: string, includeUsage: boolean) =>
  rawStream(url, customHost, trace, '/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'talk' }] }, includeUsage);

test('pii-block: a card number in the 30th chunk is cut before any of it reaches the client; content_filter, [DONE], upstream cancelled', async (t) => {
  const progress = { written: 0 };
  const setup = await policyGateway(config.policies!['pii-block'], streaming(wordsWithCardAt30(), 20, { progress, holdAfter: 35 }));
  t.teardown(() => setup.close());
  const trace = traceId('card-cut');
  const raw = await streamThrough(setup.gateway.url, setup.fake.baseUrl, trace, true);

  t.false(raw.includes('4111'), 'card digits reached the client');
  t.false(/\b1111\b/.test(raw), 'part of the card reached the client');
  t.true(raw.includes('word28'), 'text before the violation was sent');
  const sent = events(raw);
  t.is(sent.at(-1), '[DONE]');
  const chunks = sent.slice(0, -1).map((data) => JSON.parse(data));
  t.deepEqual(chunks.at(-1).choices, [{ index: 0, delta: {}, logprobs: null, finish_reason: 'content_filter' }]);
  t.false(sent.some((data) => data.includes('"error"')));

  // The fake holds after its 35th piece until its client goes away: the gateway cancelled the
  // upstream request if the fake never wrote the rest.
  await setup.fake.requests[0].closed;
  t.true(progress.written >= 30 && progress.written <= 35, `the fake wrote ${progress.written} of 50 pieces`);

  const entry = await loggedOnce(setup.gateway, trace);
  t.like(entry, { status: 200, guardrailPolicy: 'tested' });
  t.like(
    entry.guardrails.find((verdict) => verdict.side === 'output'),
    { guardrail: 'pii', action: 'deny', reason: 'PII detected: card' },
  );
  t.false(JSON.stringify(entry).includes('4111'));
});

test('pii-block through the SDK: the stream ends with finish_reason content_filter, no error raised', async (t) => {
  const setup = await policyGateway(config.policies!['pii-block'], streaming(wordsWithCardAt30()));
  t.teardown(() => setup.close());
  const { content, finishReason } = await askStream(setup.client, 'talk');
  t.is(finishReason, 'content_filter');
  t.true(content.includes('word28'));
  t.false(content.includes('4111'));
});

test('pii-redact: every PII span is replaced even when split across chunks, and the log counts them', async (t) => {
  const pieces = ['Write to an', 'a.lo', 'pez@exam', 'ple.com or call +44 20 79', '46 0958', '. Card 4111-1111-', '1111-1111, IP 10.0.', '0.1', ' thanks'];
  const setup = await policyGateway(config.policies!['pii-redact'], streaming(pieces));
  t.teardown(() => setup.close());
  const trace = traceId('redact');
  const raw = await streamThrough(setup.gateway.url, setup.fake.baseUrl, trace, false);
  const text = events(raw)
    .slice(0, -1)
    .map((data) => JSON.parse(data).choices[0]?.delta?.content ?? '')
    .join('');
  t.is(text, 'Write to [REDACTED_EMAIL] or call [REDACTED_PHONE]. Card [REDACTED_CARD], IP [REDACTED_IPV4] thanks');
  t.is(events(raw).at(-1), '[DONE]');
  const entry = await loggedOnce(setup.gateway, trace);
  const output = entry.guardrails.find((verdict) => verdict.side === 'output');
  t.like(output, { guardrail: 'pii', action: 'transform', changes: { email: 1, phone: 1, card: 1, ipv4: 1 } });
  t.true((output?.checks ?? 0) > 1);
  t.false(/4111|0958|lopez/.test(JSON.stringify(entry)));
});

test('a character window releases text as it flows, holding back only the last N characters', async (t) => {
  const pieces = Array.from({ length: 40 }, (_unused, index) => `w${index} `);
  let releasedBeforeEnd = false;
  const setup = await policyGateway(
    { output: [pii({})], stream: { window: { kind: 'chars', size: 24 } } },
    async (request, response) => {
      await streaming(pieces, 15)(request, response);
    },
  );
  t.teardown(() => setup.close());
  const stream = await setup.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], stream: true });
  let text = '';
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (text.length > 0 && chunk.choices[0]?.finish_reason == null) releasedBeforeEnd = true;
  }
  t.true(releasedBeforeEnd, 'nothing was released before the end');
  t.is(text, pieces.join(''));
});

test('whole-answer guardrails: buffer mode judges before release; after mode streams and only logs', async (t) => {
  const buffered = await policyGateway({ output: [jsonOutput({})] }, streaming(['not ', 'json.']));
  t.teardown(() => buffered.close());
  t.deepEqual(await askStream(buffered.client, 'x'), { content: '', finishReason: 'content_filter' });
  // Denied once the upstream had finished: the usage chunk (asked for) still follows, then [DONE].
  const raw = await streamThrough(buffered.gateway.url, buffered.fake.baseUrl, traceId('usage'), true);
  const sent = events(raw);
  t.is(sent.at(-1), '[DONE]');
  t.like(JSON.parse(sent.at(-2)!), { choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
  t.like(JSON.parse(sent.at(-3)!), { choices: [{ finish_reason: 'content_filter', delta: {} }] });
  t.false(raw.includes('json.'));

  const after = await policyGateway({ output: [jsonOutput({})], stream: { wholeAnswer: 'after' } }, streaming(['not ', 'json.']));
  t.teardown(() => after.close());
  t.deepEqual(await askStream(after.client, 'x'), { content: 'not json.', finishReason: 'stop' });
  const [entry] = await after.gateway.waitForEntries(1);
  t.like(entry.guardrails[0], { guardrail: 'json-output', side: 'output', action: 'deny' });
});
