import test from 'ava';
import config from '../../gateway.config.js';
import { maxTokens } from '../../plugins/guardrails/index.js';
import { jsonOutput } from '../../plugins/guardrails/json-output/index.js';
import type { FakeHandler } from '../fakes/openai-fake.js';
import { loggedOnce, traceId } from '../harness.js';
import { assertDenied, events, policyGateway, rawStream } from './helpers.js';

const CARD = '4111 1111 1111 1111';
const MODEL = 'gpt-3.5-turbo-instruct';

/** A fake answering every text completion with `text` (plain), logprobs included. */
const answeringText =
  (text: string): FakeHandler =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: 'cmpl-1',
        object: 'text_completion',
        created: 1,
        model: MODEL,
        choices: [{ index: 0, text, finish_reason: 'stop', logprobs: { tokens: text.split(' '), token_logprobs: text.split(' ').map(() => -0.1) } }],
        usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
      }),
    );
  };

/**
 * A fake streaming `pieces` as text completion chunks (then finish, usage when asked, [DONE]), `gapMs`
 * apart; it stops writing when its client goes away, and counts the pieces it wrote in `progress`.
 */
const streamingText =
  (pieces: readonly string[], gapMs = 0, progress = { written: 0 }): FakeHandler =>
  async (request, response) => {
    const body = request.json();
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (choices: object[], usage: object | null = null) =>
      `data: ${JSON.stringify({ id: 'cmpl-s', object: 'text_completion', created: 1, model: MODEL, choices, usage })}\n\n`;
    for (const piece of pieces) {
      if (response.destroyed) return;
      response.write(chunk([{ index: 0, text: piece, logprobs: null, finish_reason: null }]));
      progress.written++;
      if (gapMs) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    response.write(chunk([{ index: 0, text: '', logprobs: null, finish_reason: 'stop' }]));
    if (body.stream_options?.include_usage) response.write(chunk([], { prompt_tokens: 3, completion_tokens: pieces.length, total_tokens: 3 + pieces.length }));
    response.end('data: [DONE]\n\n');
  };

/** 50 word chunks, the 30th carrying a card number. */
const wordsWithCardAt30 = (): string[] =>
  Array.from({ length: 50 }, (_unused, index) => (index === 29 ? ` my card is ${CARD} ok.` : ` word${index + 1}${index % 7 === 6 ? '.' : ''}`));

const streamThrough = (url: string, customHost: string, trace: string, includeUsage: boolean) =>
  rawStream(url, customHost, trace, '/v1/completions', { model: MODEL, prompt: 'talk' }, includeUsage);

test('plain completion denied by an output guardrail: text "" and finish_reason content_filter, usage kept, logprobs dropped', async (t) => {
  const setup = await policyGateway(config.policies!['pii-block'], answeringText(`Card ${CARD} is yours.`));
  t.teardown(() => setup.close());
  const trace = traceId('cmpl-deny');
  const completion = await setup.client.completions.create({ model: MODEL, prompt: 'hi' }, { headers: { 'x-gateway-trace-id': trace } });
  t.deepEqual(completion.choices, [{ index: 0, text: '', finish_reason: 'content_filter', logprobs: null }]);
  t.like(completion.usage, { total_tokens: 12 });
  const entry = await loggedOnce(setup.gateway, trace);
  t.like(
    entry.guardrails.find((verdict) => verdict.side === 'output'),
    { guardrail: 'pii', action: 'deny', reason: 'PII detected: card' },
  );
  t.false(JSON.stringify(entry).includes('4111'));
});

test('plain completion redacted by an output guardrail: the email in text is replaced', async (t) => {
  const setup = await policyGateway(config.policies!['pii-redact'], answeringText('Write to ana.lopez@example.com today.'));
  t.teardown(() => setup.close());
  const completion = await setup.client.completions.create({ model: MODEL, prompt: 'hi' });
  t.is(completion.choices[0].text, 'Write to [REDACTED_EMAIL] today.');
  t.is(completion.choices[0].finish_reason, 'stop');
  t.is(completion.choices[0].logprobs, null, 'logprobs of the original tokens would reveal the email');
  t.false(JSON.stringify(completion).includes('lopez'));
});

test('streamed completion: a card number in the 30th chunk is cut before any of it reaches the client; content_filter, [DONE], upstream cancelled', async (t) => {
  const progress = { written: 0 };
  const setup = await policyGateway(config.policies!['pii-block'], streamingText(wordsWithCardAt30(), 20, progress));
  t.teardown(() => setup.close());
  const trace = traceId('cmpl-card-cut');
  const raw = await streamThrough(setup.gateway.url, setup.fake.baseUrl, trace, true);

  t.false(raw.includes('4111'), 'card digits reached the client');
  t.false(/\b1111\b/.test(raw), 'part of the card reached the client');
  t.true(raw.includes('word28'), 'text before the violation was sent');
  const sent = events(raw);
  t.is(sent.at(-1), '[DONE]');
  const chunks = sent.slice(0, -1).map((data) => JSON.parse(data));
  t.true(chunks.every((chunk) => chunk.object === 'text_completion'));
  t.deepEqual(chunks.at(-1).choices, [{ index: 0, text: '', logprobs: null, finish_reason: 'content_filter' }]);
  t.false(sent.some((data) => data.includes('"error"')));

  const upstream = setup.fake.requests[0];
  const closedAfter = await Promise.race([upstream.closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 10_000))]);
  t.not(closedAfter, -1, 'the upstream request was never cancelled');
  // Cut mid-answer: the fake saw its client leave before it had written all 50 pieces.
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.true(progress.written >= 30 && progress.written < 50, `the fake wrote ${progress.written} of 50 pieces`);

  const entry = await loggedOnce(setup.gateway, trace);
  t.like(entry, { status: 200, operation: 'completion', guardrailPolicy: 'tested' });
  t.like(
    entry.guardrails.find((verdict) => verdict.side === 'output'),
    { guardrail: 'pii', action: 'deny', reason: 'PII detected: card' },
  );
});

test('streamed completion through the SDK: ends with finish_reason content_filter, no error raised', async (t) => {
  const setup = await policyGateway(config.policies!['pii-block'], streamingText(wordsWithCardAt30()));
  t.teardown(() => setup.close());
  const stream = await setup.client.completions.create({ model: MODEL, prompt: 'talk', stream: true });
  let text = '';
  let finishReason: string | null = null;
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      text += choice.text;
      finishReason = choice.finish_reason ?? finishReason;
    }
  }
  t.is(finishReason, 'content_filter');
  t.true(text.includes('word28'));
  t.false(text.includes('4111'));
});

test('streamed completion: a span split across chunks is redacted', async (t) => {
  const setup = await policyGateway(config.policies!['pii-redact'], streamingText(['Write to an', 'a.lo', 'pez@exam', 'ple.com', ' now', ' please.']));
  t.teardown(() => setup.close());
  const raw = await streamThrough(setup.gateway.url, setup.fake.baseUrl, traceId('cmpl-redact'), false);
  const sent = events(raw);
  t.is(sent.at(-1), '[DONE]');
  const text = sent
    .slice(0, -1)
    .map((data) => JSON.parse(data).choices[0]?.text ?? '')
    .join('');
  t.is(text, 'Write to [REDACTED_EMAIL] now please.');
  t.false(raw.includes('lopez'));
});

test('streamed completion denied once the upstream finished: content_filter, then the usage chunk asked for, then [DONE]', async (t) => {
  const setup = await policyGateway({ output: [jsonOutput({})] }, streamingText(['not ', 'json.']));
  t.teardown(() => setup.close());
  const raw = await streamThrough(setup.gateway.url, setup.fake.baseUrl, traceId('cmpl-usage'), true);
  const sent = events(raw);
  t.is(sent.at(-1), '[DONE]');
  t.like(JSON.parse(sent.at(-2)!), { object: 'text_completion', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
  t.deepEqual(JSON.parse(sent.at(-3)!).choices, [{ index: 0, text: '', logprobs: null, finish_reason: 'content_filter' }]);
  t.false(raw.includes('json.'));
});

test('input denial on a completion prompt (string or array of strings): 400 guardrail_denied, nothing sent upstream', async (t) => {
  const setup = await policyGateway(config.policies!['pii-block'], answeringText('fine'));
  t.teardown(() => setup.close());
  const trace = traceId('cmpl-input-deny');
  await assertDenied(t, setup.client.completions.create({ model: MODEL, prompt: `pay with ${CARD}` }, { headers: { 'x-gateway-trace-id': trace } }));
  await assertDenied(t, setup.client.completions.create({ model: MODEL, prompt: ['hello', 'mail me at ana@example.com'] }));
  t.is(setup.fake.requests.length, 0);
  const entry = await loggedOnce(setup.gateway, trace);
  t.like(entry, { status: 400, operation: 'completion', error: { code: 'guardrail_denied' } });
  t.like(entry.guardrails[0], { guardrail: 'pii', side: 'input', action: 'deny' });
});

test('input redaction rewrites the prompt in the form sent; a prompt of token ids is not judged and goes up intact', async (t) => {
  const setup = await policyGateway(config.policies!['pii-redact'], answeringText('fine'));
  t.teardown(() => setup.close());
  await setup.client.completions.create({ model: MODEL, prompt: 'mail ana@example.com' });
  t.is(setup.fake.requests[0].json().prompt, 'mail [REDACTED_EMAIL]');
  await setup.client.completions.create({ model: MODEL, prompt: ['plain', 'call +44 20 7946 0958'] });
  t.deepEqual(setup.fake.requests[1].json().prompt, ['plain', 'call [REDACTED_PHONE]']);
  await setup.client.completions.create({ model: MODEL, prompt: [1212, 318, 257] });
  t.deepEqual(setup.fake.requests[2].json().prompt, [1212, 318, 257]);
});

test('max-tokens caps a larger max_tokens of a completion, and leaves one that asked for none at its default', async (t) => {
  const setup = await policyGateway({ input: [maxTokens({ max: 64 })] }, answeringText('ok'));
  t.teardown(() => setup.close());
  await setup.client.completions.create({ model: MODEL, prompt: 'hi', max_tokens: 4000 });
  await setup.client.completions.create({ model: MODEL, prompt: 'hi', max_tokens: 10 });
  await setup.client.completions.create({ model: MODEL, prompt: 'hi' });
  const sent = setup.fake.requests.map((request) => request.json());
  t.is(sent[0].max_tokens, 64);
  t.is(sent[0].prompt, 'hi');
  t.is(sent[1].max_tokens, 10);
  t.false('max_tokens' in sent[2]);
});
