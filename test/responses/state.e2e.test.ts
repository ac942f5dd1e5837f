import test from 'ava';
import OpenAI from 'openai';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { anthropicFakeRenderer } from '../../plugins/providers/anthropic/anthropic-fake.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type RenderedFake, startRenderedFake } from '../fakes/rendered-fake.js';
import { type ResponsesFake, startResponsesFake } from '../fakes/responses-fake.js';
import { collectResponsesStream, validateResponsesStream } from '../fakes/responses-grammar.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { createKey } from '../vault/vault-harness.js';

/**
 * Responses state: `store` keeps a response, `previous_response_id` continues it on any provider
 * (the gateway rebuilds the conversation, also across providers), and `GET`/`DELETE` are scoped to
 * the key that made it.
 */

let gateway: TestGateway;
let native: ResponsesFake;
let claude: RenderedFake;

test.before(async () => {
  native = await startResponsesFake();
  claude = await startRenderedFake(anthropicFakeRenderer);
  gateway = await startGateway({ providers: [openai(), anthropic()] });
});
test.after.always(async () => {
  await gateway?.close();
  await native?.close();
  await claude?.close();
});

const client = (headers: Record<string, string>, apiKey = PROVIDER_KEY) =>
  new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: headers });
const viaOpenAI = () => client({ 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': native.baseUrl });
const viaAnthropic = () => client({ 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': claude.baseUrl });
const usage = { promptTokens: 5, completionTokens: 3 };
const lastAnthropicBody = () => claude.body(claude.requests.length - 1);

test.serial('previous_response_id continues a conversation on a translated provider, plain and streamed', async (t) => {
  claude.answer({ kind: 'text', text: 'I am Claude.', finishReason: 'stop', usage });
  const first = await viaAnthropic().responses.create({ model: 'claude-sonnet-4-5', input: 'Who are you?' });
  claude.answer({ kind: 'text', text: 'You asked who I am.', finishReason: 'stop', usage });
  const stream = await viaAnthropic().responses.create({ model: 'claude-sonnet-4-5', input: 'What did I ask?', previous_response_id: first.id, stream: true });
  const result = await collectResponsesStream(stream);
  t.deepEqual(result.problems, []);
  t.is(result.response?.previous_response_id, first.id);
  t.deepEqual(lastAnthropicBody().messages, [
    { role: 'user', content: [{ type: 'text', text: 'Who are you?' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'I am Claude.' }] },
    { role: 'user', content: 'What did I ask?' },
  ]);
  claude.answer({ kind: 'text', text: 'Third.', finishReason: 'stop', usage });
  await viaAnthropic().responses.create({ model: 'claude-sonnet-4-5', input: 'And now?', previous_response_id: result.response!.id });
  t.is(lastAnthropicBody().messages.length, 5, 'the whole chain is rebuilt');
});

test.serial('previous_response_id across two providers: OpenAI (native) then Anthropic (translated) then OpenAI again', async (t) => {
  native.answer({ kind: 'text', text: 'Native hello', reasoning: 'OpenAI reasoning' });
  const first = await viaOpenAI().responses.create({ model: 'gpt-5-mini', input: 'Hi there' });
  claude.answer({ kind: 'text', text: 'Claude continues', finishReason: 'stop', usage });
  const second = await viaAnthropic().responses.create({ model: 'claude-sonnet-4-5', input: 'Go on', previous_response_id: first.id });
  t.is(second.output_text, 'Claude continues');
  // OpenAI's reasoning is sealed for OpenAI only: Anthropic gets the text turns.
  t.deepEqual(lastAnthropicBody().messages, [
    { role: 'user', content: [{ type: 'text', text: 'Hi there' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Native hello' }] },
    { role: 'user', content: 'Go on' },
  ]);
  native.answer({ kind: 'text', text: 'Back on OpenAI' });
  const third = await viaOpenAI().responses.create({ model: 'gpt-5-mini', input: 'Last one', previous_response_id: second.id });
  t.is(third.output_text, 'Back on OpenAI');
  const body = native.bodies().at(-1)!;
  t.is(body.previous_response_id, undefined, 'the gateway keeps the state: the conversation is spelled out');
  const input = body.input as Array<Record<string, any>>;
  t.deepEqual(
    input.map((item) => item.type ?? 'message'),
    ['message', 'reasoning', 'message', 'message', 'message', 'message'],
  );
  t.is(input[1].encrypted_content, 'openai-sealed-reasoning', "OpenAI's own reasoning goes back to OpenAI");
  t.regex(input[1].id, /^rs_fake/);
  t.deepEqual(input[4], { type: 'message', role: 'assistant', content: 'Claude continues' }, "another provider's turn goes back as text, without its id");
  t.deepEqual(input[5], { role: 'user', content: 'Last one' });
});

test.serial('the native path answers the previous_response_id the client sent, plain, streamed and retrieved (issue 31)', async (t) => {
  native.answer({ kind: 'text', text: 'First' });
  const first = await viaOpenAI().responses.create({ model: 'gpt-5-mini', input: 'One' });
  native.answer({ kind: 'text', text: 'Second' });
  const second = await viaOpenAI().responses.create({ model: 'gpt-5-mini', input: 'Two', previous_response_id: first.id });
  t.is(native.bodies().at(-1)!.previous_response_id, undefined, 'the provider gets the conversation, not the id');
  t.is(second.previous_response_id, first.id);
  t.is((await viaOpenAI().responses.retrieve(second.id)).previous_response_id, first.id);
  native.answer({ kind: 'text', text: 'Third' });
  const stream = await viaOpenAI().responses.create({ model: 'gpt-5-mini', input: 'Three', previous_response_id: second.id, stream: true });
  const events: Array<Record<string, any>> = [];
  for await (const event of stream) events.push(event);
  const result = validateResponsesStream(events as unknown as Parameters<typeof validateResponsesStream>[0]);
  t.deepEqual(result.problems, []);
  const carried = events.filter((event) => 'response' in event).map((event) => [event.type, event.response.previous_response_id]);
  t.true(carried.length >= 2, JSON.stringify(carried));
  for (const [type, previous] of carried) t.is(previous, second.id, `${type} carries the client's previous_response_id`);
  t.is(result.response?.previous_response_id, second.id);
  t.is((await viaOpenAI().responses.retrieve(result.response!.id)).previous_response_id, second.id);
});

test.serial('retrieve, input_items and delete through the SDK; store: false keeps nothing', async (t) => {
  claude.answer({ kind: 'text', text: 'Stored answer', finishReason: 'stop', usage });
  const first = await viaAnthropic().responses.create({ model: 'claude-sonnet-4-5', input: 'Remember this', metadata: { topic: 'state' } });
  claude.answer({ kind: 'text', text: 'Second answer', finishReason: 'stop', usage });
  const second = await viaAnthropic().responses.create({ model: 'claude-sonnet-4-5', input: 'And this', previous_response_id: first.id });
  const retrieved = await viaAnthropic().responses.retrieve(second.id);
  t.is(retrieved.id, second.id);
  t.is(retrieved.output_text, 'Second answer');
  t.deepEqual(retrieved.metadata, {});
  t.deepEqual((await viaAnthropic().responses.retrieve(first.id)).metadata, { topic: 'state' });
  const items = await viaAnthropic().responses.inputItems.list(second.id, { order: 'asc' });
  t.deepEqual(
    items.data.map((item) => (item.type === 'message' ? `${item.role}:${(item.content[0] as { text: string }).text}` : item.type)),
    ['user:Remember this', 'assistant:Stored answer', 'user:And this'],
  );
  const newestFirst = await viaAnthropic().responses.inputItems.list(second.id, { limit: 1 });
  t.is(newestFirst.data.length, 1);
  t.true(newestFirst.has_more);
  t.is((newestFirst.data[0] as { role: string }).role, 'user');
  const deleted = await viaAnthropic().responses.delete(second.id);
  t.deepEqual(deleted as unknown, { id: second.id, object: 'response', deleted: true });
  await t.throwsAsync(viaAnthropic().responses.retrieve(second.id), { instanceOf: OpenAI.NotFoundError });

  claude.answer({ kind: 'text', text: 'Not kept', finishReason: 'stop', usage });
  const unstored = await viaAnthropic().responses.create({ model: 'claude-sonnet-4-5', input: 'Forget this', store: false });
  await t.throwsAsync(viaAnthropic().responses.retrieve(unstored.id), { instanceOf: OpenAI.NotFoundError });
  const error = await t.throwsAsync(viaAnthropic().responses.create({ model: 'claude-sonnet-4-5', input: 'x', previous_response_id: unstored.id }), { instanceOf: OpenAI.NotFoundError });
  t.is((error as InstanceType<typeof OpenAI.NotFoundError>).param, 'previous_response_id');
});

test.serial('GET, DELETE and previous_response_id are scoped to the key: another key gets 404', async (t) => {
  const a = await createKey(t, gateway, { name: 'responses-a', provider: 'openai', provider_key: 'sk-key-a-0123456789abcdef', custom_host: native.baseUrl });
  const b = await createKey(t, gateway, { name: 'responses-b', provider: 'openai', provider_key: 'sk-key-b-0123456789abcdef', custom_host: native.baseUrl });
  // The virtual key as the SDK's API key (Authorization: Bearer), as agents send it.
  const keyA = client({}, a.key);
  const keyB = new OpenAI({ apiKey: 'unused', baseURL: `${gateway.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-api-key': b.key } });
  native.answer({ kind: 'text', text: "A's answer" });
  const made = await keyA.responses.create({ model: 'gpt-5-mini', input: 'Private' });
  t.is((await keyA.responses.retrieve(made.id)).output_text, "A's answer");
  await t.throwsAsync(keyB.responses.retrieve(made.id), { instanceOf: OpenAI.NotFoundError });
  await t.throwsAsync(keyB.responses.inputItems.list(made.id), { instanceOf: OpenAI.NotFoundError });
  await t.throwsAsync(keyB.responses.delete(made.id), { instanceOf: OpenAI.NotFoundError });
  await t.throwsAsync(viaOpenAI().responses.retrieve(made.id), { instanceOf: OpenAI.NotFoundError }, 'the account key does not read a virtual key’s responses');
  await t.throwsAsync(keyB.responses.create({ model: 'gpt-5-mini', input: 'x', previous_response_id: made.id }), { instanceOf: OpenAI.NotFoundError });
  t.is((await keyA.responses.retrieve(made.id)).id, made.id, 'still there for its owner');
  await keyA.responses.delete(made.id);
  await t.throwsAsync(keyA.responses.retrieve(made.id), { instanceOf: OpenAI.NotFoundError });
  const unauthenticated = await fetch(`${gateway.url}/v1/responses/${made.id}`);
  t.is(unauthenticated.status, 401);
});
