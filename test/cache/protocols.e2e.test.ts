import Anthropic from '@anthropic-ai/sdk';
import test from 'ava';
import OpenAI from 'openai';
import { bannedWords } from '../../plugins/guardrails/index.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { checkMessagesStream } from '../fakes/messages-stream.js';
import { type MessagesFake, startMessagesFake } from '../fakes/messages-fake.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { collectResponsesStream, parseResponsesSse, validateResponsesStream } from '../fakes/responses-grammar.js';
import { type ResponsesFake, startResponsesFake } from '../fakes/responses-fake.js';
import { ACCOUNT_KEY, loggedOnce, PROVIDER_KEY, startGateway, type TestGateway, traceId } from '../harness.js';
import { anthropicClient, postMessages } from '../messages/helpers.js';
import { createKey } from '../vault/vault-harness.js';
import { echoUpstream } from './cache-harness.js';

// The Messages and Responses protocols through the response cache, with the official SDKs: a plain
// answer hits a stream and back (native and translated), replayed streams follow each protocol's
// grammar, stateful Responses requests are never cached, keys keep their own answers, and a hit
// costs nothing.
let gateway: TestGateway;
let messagesFake: MessagesFake;
let responsesFake: ResponsesFake;
let chatFake: Fake;

test.before(async () => {
  messagesFake = await startMessagesFake('sse');
  messagesFake.answer({ content: [{ type: 'text', text: 'Cached hello' }, { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }], stopReason: 'tool_use' });
  responsesFake = await startResponsesFake();
  responsesFake.answer({ kind: 'text', text: 'Native cached hello', reasoning: 'Thought briefly.' });
  chatFake = await startFake(echoUpstream().handler);
  const shared = { mode: 'simple' as const, namespace: 'proto-team' };
  // The echo fake's bag-of-words embeddings: the same words in another order are similar.
  const semantic = { mode: 'semantic' as const, namespace: 'proto-semantic', embedding: { provider: 'openai', custom_host: chatFake.baseUrl, model: 'fake-embed' } };
  gateway = await startGateway({
    providers: [openai(), anthropic()],
    cache: { default: { mode: 'simple', max_age: 600 } },
    policies: { 'no-hello': { output: [bannedWords({ words: ['hello'] })] } },
    routes: {
      'shared-messages': { strategy: { mode: 'single' }, cache: shared, targets: [{ provider: 'anthropic', custom_host: messagesFake.baseUrl }] },
      'shared-responses': { strategy: { mode: 'single' }, cache: shared, targets: [{ provider: 'openai', custom_host: responsesFake.baseUrl }] },
      'semantic-messages': { strategy: { mode: 'single' }, cache: semantic, targets: [{ provider: 'openai', custom_host: chatFake.baseUrl }] },
      'semantic-responses': { strategy: { mode: 'single' }, cache: semantic, targets: [{ provider: 'openai', custom_host: responsesFake.baseUrl }] },
    },
  });
});

test.after.always(async () => {
  await gateway?.close();
  await Promise.all([messagesFake?.close(), responsesFake?.close(), chatFake?.close()]);
});

const nativeMessages = () => anthropicClient(gateway.url, { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': messagesFake.baseUrl });
const translatedMessages = () => anthropicClient(gateway.url, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': chatFake.baseUrl });
const responsesClient = (provider: 'openai' | 'anthropic', host: string, apiKey = PROVIDER_KEY) =>
  new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': provider, 'x-gateway-custom-host': host } });
const nativeResponses = () => responsesClient('openai', responsesFake.baseUrl);
/** Anthropic has no Responses API: the request is translated to its Messages API (the Messages fake). */
const translatedResponses = () => responsesClient('anthropic', messagesFake.baseUrl);

/** Upstream requests of a fake whose body contains `text`. */
const calls = (fake: Fake, text: string) => fake.requests.filter((request) => request.body.toString('utf8').includes(text)).length;

const messageBody = (text: string) => ({ model: 'claude-opus-4-7', max_tokens: 64, messages: [{ role: 'user' as const, content: text }] });

/** A streamed Messages request through the SDK's raw response: its headers, and its events checked against the grammar. */
async function messagesStream(client: Anthropic, text: string) {
  const { data, response } = await client.messages.create({ ...messageBody(text), stream: true }).withResponse();
  const events = [];
  for await (const event of data) events.push(event);
  return { response, events };
}

for (const [label, client, fake] of [
  ['native', nativeMessages, () => messagesFake],
  ['translated', translatedMessages, () => chatFake],
] as const) {
  test.serial(`messages (${label}): a plain miss, then a streamed hit that follows the grammar`, async (t) => {
    const text = `messages plain first ${label}`;
    const miss = await client().messages.create(messageBody(text)).withResponse();
    t.is(miss.response.headers.get('x-gateway-cache'), 'MISS');
    const raw = await postMessages(gateway.url, { ...messageBody(text), stream: true }, label === 'native' ? { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': messagesFake.baseUrl } : { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': chatFake.baseUrl });
    t.is(raw.status, 200);
    t.is(raw.headers.get('x-gateway-cache'), 'HIT');
    t.regex(raw.headers.get('age') ?? '', /^\d+$/);
    t.regex(raw.headers.get('content-type') ?? '', /text\/event-stream/);
    const checked = checkMessagesStream(await raw.text());
    t.deepEqual(checked.message.content, miss.data.content);
    t.is(checked.message.stop_reason, miss.data.stop_reason);
    t.is(calls(fake(), text), 1, 'the provider was asked once');
  });

  test.serial(`messages (${label}): a streamed miss is stored whole, then a plain hit`, async (t) => {
    const text = `messages stream first ${label}`;
    const streamed = await messagesStream(client(), text);
    t.is(streamed.response.headers.get('x-gateway-cache'), 'MISS');
    const final = streamed.events.at(-1);
    t.is(final?.type, 'message_stop');
    const hit = await client().messages.create(messageBody(text)).withResponse();
    t.is(hit.response.headers.get('x-gateway-cache'), 'HIT');
    const again = await messagesStream(client(), text);
    t.is(again.response.headers.get('x-gateway-cache'), 'HIT');
    const textOf = (message: Anthropic.Message) => message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
    const streamedText = streamed.events.flatMap((event) => (event.type === 'content_block_delta' && event.delta.type === 'text_delta' ? [event.delta.text] : [])).join('');
    t.is(textOf(hit.data), streamedText);
    t.is(calls(fake(), text), 1, 'the provider was asked once');
  });
}

test.serial('messages: a native stream with a tool call adds up to the whole Message (input parsed)', async (t) => {
  const text = 'messages tool stream';
  await messagesStream(nativeMessages(), text);
  const hit = await nativeMessages().messages.create(messageBody(text)).withResponse();
  t.is(hit.response.headers.get('x-gateway-cache'), 'HIT');
  t.deepEqual(hit.data.content, [
    { type: 'text', text: 'Cached hello' },
    { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
  ]);
  t.is(hit.data.stop_reason, 'tool_use');
  t.is(hit.data.usage.output_tokens, 12);
});

const responseBody = (text: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-5-mini', input: text, store: false, ...extra });

for (const [label, client, fake] of [
  ['native', nativeResponses, () => responsesFake as Fake],
  ['translated', translatedResponses, () => messagesFake as Fake],
] as const) {
  test.serial(`responses (${label}): a stateless plain miss, then a streamed hit with a new id`, async (t) => {
    const text = `responses plain first ${label}`;
    // With the sealed reasoning asked for, the replayed items are the answer's items as they were.
    const body = responseBody(text, { include: ['reasoning.encrypted_content'] });
    const miss = await client().responses.create(body).withResponse();
    t.is(miss.response.headers.get('x-gateway-cache'), 'MISS');
    t.is(miss.data.status, 'completed');
    const { data: stream, response } = await client().responses.create({ ...body, stream: true }).withResponse();
    t.is(response.headers.get('x-gateway-cache'), 'HIT');
    t.regex(response.headers.get('age') ?? '', /^\d+$/);
    const grammar = await collectResponsesStream(stream);
    t.deepEqual(grammar.problems, []);
    t.is(grammar.terminal, 'response.completed');
    t.is(grammar.response?.output_text ?? [...grammar.texts.values()].join(''), miss.data.output_text);
    t.not(grammar.response?.id, miss.data.id, 'a hit is a new response');
    t.deepEqual(grammar.response?.output, miss.data.output);
    t.is(calls(fake(), text), 1, 'the provider was asked once');
  });

  test.serial(`responses (${label}): a streamed miss is stored, then a plain hit`, async (t) => {
    const text = `responses stream first ${label}`;
    const { data: stream, response } = await client().responses.create({ ...responseBody(text), stream: true }).withResponse();
    t.is(response.headers.get('x-gateway-cache'), 'MISS');
    const streamed = await collectResponsesStream(stream);
    t.deepEqual(streamed.problems, []);
    const hit = await client().responses.create(responseBody(text)).withResponse();
    t.is(hit.response.headers.get('x-gateway-cache'), 'HIT');
    t.is(hit.data.output_text, [...streamed.texts.values()].join(''));
    t.not(hit.data.id, streamed.response?.id);
    t.is(calls(fake(), text), 1, 'the provider was asked once');
    // The raw replayed stream, as the wire carries it, also follows the grammar.
    const raw = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-provider': label === 'native' ? 'openai' : 'anthropic', 'x-gateway-custom-host': fake().baseUrl },
      body: JSON.stringify({ ...responseBody(text), stream: true }),
    });
    t.is(raw.headers.get('x-gateway-cache'), 'HIT');
    const parsed = parseResponsesSse(await raw.text());
    t.deepEqual(parsed.problems, []);
    t.deepEqual(validateResponsesStream(parsed.events).problems, []);
  });
}

test.serial('responses: a stateful request (store true by default, previous_response_id) is a BYPASS and asks the provider each time', async (t) => {
  const text = 'responses stored';
  const first = await nativeResponses().responses.create({ model: 'gpt-5-mini', input: text }).withResponse();
  t.is(first.response.headers.get('x-gateway-cache'), 'BYPASS');
  const second = await nativeResponses().responses.create({ model: 'gpt-5-mini', input: text, store: true }).withResponse();
  t.is(second.response.headers.get('x-gateway-cache'), 'BYPASS');
  t.not(second.data.id, first.data.id);
  t.is(calls(responsesFake, text), 2);
  const followUp = 'responses follow-up';
  for (let round = 0; round < 2; round++) {
    const next = await nativeResponses().responses.create({ model: 'gpt-5-mini', input: followUp, store: false, previous_response_id: first.data.id }).withResponse();
    t.is(next.response.headers.get('x-gateway-cache'), 'BYPASS');
  }
  t.is(calls(responsesFake, followUp), 2);
});

test.serial('two keys never read each other’s Messages or Responses answers; a hit costs the key nothing', async (t) => {
  const keys = await Promise.all(
    [1, 2].map(async (index) => ({
      messages: (await createKey(t, gateway, { name: `proto-cache-messages-${index}`, provider: 'anthropic', provider_key: PROVIDER_KEY, custom_host: messagesFake.baseUrl })).key,
      responses: (await createKey(t, gateway, { name: `proto-cache-responses-${index}`, provider: 'openai', provider_key: PROVIDER_KEY, custom_host: responsesFake.baseUrl })).key,
    })),
  );
  const messagesOf = (key: string) => new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0, timeout: 10_000 });
  const responsesOf = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000 });
  const text = 'isolated protocols';
  const traces: string[] = [];
  const ask = async (key: (typeof keys)[number]) => {
    const trace = traceId('proto-cache');
    traces.push(trace);
    const message = await messagesOf(key.messages).messages.create(messageBody(text), { headers: { 'x-gateway-trace-id': trace } }).withResponse();
    const response = await responsesOf(key.responses).responses.create(responseBody(text)).withResponse();
    return [message.response.headers.get('x-gateway-cache'), response.response.headers.get('x-gateway-cache')];
  };
  t.deepEqual(await ask(keys[0]), ['MISS', 'MISS']);
  t.deepEqual(await ask(keys[1]), ['MISS', 'MISS']);
  t.deepEqual(await ask(keys[0]), ['HIT', 'HIT']);
  t.deepEqual(await ask(keys[1]), ['HIT', 'HIT']);
  t.is(calls(messagesFake, text), 2);
  t.is(calls(responsesFake, text), 2);

  const miss = await loggedOnce(gateway, traces[0]);
  const hit = await loggedOnce(gateway, traces[2]);
  t.true((miss.costUsd ?? 0) > 0, 'the miss was priced');
  t.is(hit.cache?.status, 'HIT');
  t.is(hit.costUsd, undefined, 'a hit costs nothing');
  t.is(hit.usage, undefined);
  t.is(hit.cache?.savedUsd, miss.costUsd);
});

test.serial('output guardrails judge a hit: an answer stored for one key is denied, as each protocol denies, for a key whose policy forbids it', async (t) => {
  // Granted the shared routes: a key names no route it was not given.
  const shared = ['shared-messages', 'shared-responses'];
  const open = (await createKey(t, gateway, { name: 'proto-cache-open', provider: 'anthropic', provider_key: PROVIDER_KEY, allowed_routes: shared })).key;
  const guarded = (await createKey(t, gateway, { name: 'proto-cache-guarded', provider: 'anthropic', provider_key: PROVIDER_KEY, guardrail_policy: 'no-hello', allowed_routes: shared })).key;
  const messagesVia = (key: string) => anthropicClient(gateway.url, { 'x-gateway-api-key': key, 'x-gateway-config': 'shared-messages' });
  const responsesVia = (key: string) =>
    new OpenAI({ apiKey: PROVIDER_KEY, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': key, 'x-gateway-config': 'shared-responses' } });
  const text = 'judged on a hit';

  const stored = await messagesVia(open).messages.create(messageBody(text)).withResponse();
  t.is(stored.response.headers.get('x-gateway-cache'), 'MISS');
  const denied = await messagesVia(guarded).messages.create(messageBody(text)).withResponse();
  t.is(denied.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(denied.data.stop_reason, 'refusal');
  t.deepEqual(denied.data.content, []);
  const deniedStream = await postMessages(gateway.url, { ...messageBody(text), stream: true }, { 'x-api-key': guarded, 'x-gateway-config': 'shared-messages' });
  t.is(deniedStream.headers.get('x-gateway-cache'), 'HIT');
  const checked = checkMessagesStream(await deniedStream.text());
  t.is(checked.message.stop_reason, 'refusal');
  t.false(JSON.stringify(checked.events).includes('hello'));
  t.is(calls(messagesFake, text), 1);

  const response = await responsesVia(open).responses.create(responseBody(text)).withResponse();
  t.is(response.response.headers.get('x-gateway-cache'), 'MISS');
  t.regex(response.data.output_text, /hello/);
  const filtered = await responsesVia(guarded).responses.create(responseBody(text)).withResponse();
  t.is(filtered.response.headers.get('x-gateway-cache'), 'HIT');
  t.is(filtered.data.status, 'incomplete');
  t.is(filtered.data.incomplete_details?.reason, 'content_filter');
  t.false(filtered.data.output_text.includes('hello'));
  const grammar = await collectResponsesStream(await responsesVia(guarded).responses.create({ ...responseBody(text), stream: true }));
  t.deepEqual(grammar.problems, []);
  t.is(grammar.terminal, 'response.incomplete');
  t.is(calls(responsesFake, text), 1);
});

test.serial('a refusal, an incomplete Response and a stream that failed are never stored', async (t) => {
  t.teardown(() => {
    messagesFake.answer({ content: [{ type: 'text', text: 'Cached hello' }, { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }], stopReason: 'tool_use' });
    responsesFake.answer({ kind: 'text', text: 'Native cached hello', reasoning: 'Thought briefly.' });
  });
  messagesFake.answer({ content: [{ type: 'text', text: 'I will not.' }], stopReason: 'refusal' });
  const refusal = 'messages refusal';
  await messagesStream(nativeMessages(), refusal);
  const again = await nativeMessages().messages.create(messageBody(refusal)).withResponse();
  t.is(again.response.headers.get('x-gateway-cache'), 'MISS');
  t.is(calls(messagesFake, refusal), 2);

  responsesFake.answer({ kind: 'text', text: 'Cut short', status: 'incomplete' });
  const incomplete = 'responses incomplete';
  for (let round = 0; round < 2; round++) {
    const grammar = await collectResponsesStream(await nativeResponses().responses.create({ ...responseBody(incomplete), stream: true }));
    t.is(grammar.terminal, 'response.incomplete');
  }
  t.is(calls(responsesFake, incomplete), 2);

  responsesFake.answer({ kind: 'streamError', text: 'Half', message: 'upstream broke' });
  const failed = 'responses failed stream';
  for (let round = 0; round < 2; round++) {
    const { data, response } = await nativeResponses().responses.create({ ...responseBody(failed), stream: true }).withResponse();
    t.is(response.headers.get('x-gateway-cache'), 'MISS');
    t.is((await collectResponsesStream(data)).terminal, 'response.failed');
  }
  t.is(calls(responsesFake, failed), 2);
});

test.serial('semantic mode: the same words in another order hit on Messages (its messages) and Responses (its input)', async (t) => {
  const first = 'Please summarise the meeting notes about the spring budget for the whole team today';
  const reordered = 'today, for the whole team: please summarise the meeting notes about the spring budget';
  const messagesVia = () => anthropicClient(gateway.url, { 'x-gateway-config': 'semantic-messages' });
  const stored = await messagesVia().messages.create(messageBody(first)).withResponse();
  t.is(stored.response.headers.get('x-gateway-cache'), 'MISS');
  const near = await messagesVia().messages.create(messageBody(reordered)).withResponse();
  t.is(near.response.headers.get('x-gateway-cache'), 'SEMANTIC-HIT');
  t.deepEqual(near.data.content, stored.data.content);
  const other = await messagesVia().messages.create({ ...messageBody(reordered), max_tokens: 65 }).withResponse();
  t.is(other.response.headers.get('x-gateway-cache'), 'MISS', 'other parameters never share an answer');

  const responsesVia = () =>
    new OpenAI({ apiKey: PROVIDER_KEY, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-config': 'semantic-responses' } });
  const response = await responsesVia().responses.create(responseBody(first)).withResponse();
  t.is(response.response.headers.get('x-gateway-cache'), 'MISS');
  const nearResponse = await responsesVia().responses.create(responseBody(reordered)).withResponse();
  t.is(nearResponse.response.headers.get('x-gateway-cache'), 'SEMANTIC-HIT');
  t.is(nearResponse.data.output_text, response.data.output_text);
  t.is(calls(responsesFake, reordered), 0);
});
