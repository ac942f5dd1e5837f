import test from 'ava';
import { SseDecoder } from '../../../core/http/sse.js';
import { GatewayError } from '../../../core/errors.js';
import type { ChatCompletionChunk, ChatRequest, ProviderTarget, UpstreamReply } from '../../../core/spec/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { createWatsonxStreamMapper, fromWatsonxResponse, toWatsonxBody } from './watsonx-chat.js';
import { mapWatsonxError } from './watsonx-error.js';
import { FAKE_PROJECT, watsonxFixture } from './watsonx-fake.js';
import { watsonx, WATSONX_DEFAULT_VERSION } from './index.js';

const target = (headers: Record<string, string> = { 'x-gateway-watsonx-project-id': FAKE_PROJECT }): ProviderTarget => ({
  baseUrl: 'https://eu-de.ml.cloud.ibm.com',
  customHost: false,
  headers,
  credentials: { apiKey: 'iam-access-token' },
  strict: true,
});
const request: ChatRequest = { model: 'ibm/granite-3-3-8b-instruct', messages: [{ role: 'user', content: 'Translate "Hello" in Italian' }] };
const plugin = (params: Parameters<typeof watsonx>[0] = {}) => watsonx(params).create(pluginDependencies());
const reply = (status: number, name: string): UpstreamReply => ({ status, headers: {}, body: Buffer.from(watsonxFixture(name)) });

test('the region picks the host: the header, else the param, else us-south; a malformed region is a 400', (t) => {
  t.is(plugin().baseUrl({}), 'https://us-south.ml.cloud.ibm.com');
  t.is(plugin({ region: 'jp-tok' }).baseUrl({}), 'https://jp-tok.ml.cloud.ibm.com');
  t.is(plugin({ region: 'jp-tok' }).baseUrl({ 'x-gateway-watsonx-region': 'eu-de' }), 'https://eu-de.ml.cloud.ibm.com');
  const error = t.throws(() => plugin().baseUrl({ 'x-gateway-watsonx-region': 'evil.example/x' }), { instanceOf: GatewayError }) as GatewayError;
  t.like(error.body, { param: 'x-gateway-watsonx-region', code: 'invalid_header' });
});

test('plain and streamed chat take their own paths with the version date; the body names model_id and the project', (t) => {
  const { operations } = plugin();
  const plain = operations.chat!.toUpstream(request, target());
  t.is(plain.url, `https://eu-de.ml.cloud.ibm.com/ml/v1/text/chat?version=${WATSONX_DEFAULT_VERSION}`);
  t.deepEqual(JSON.parse(String(plain.body)), { model_id: 'ibm/granite-3-3-8b-instruct', project_id: FAKE_PROJECT, messages: request.messages });
  const streamed = operations.chat!.toUpstream({ ...request, stream: true, stream_options: { include_usage: true } }, target({ 'x-gateway-watsonx-space-id': 'space-1', 'x-gateway-watsonx-version': '2025-01-01' }));
  t.is(streamed.url, 'https://eu-de.ml.cloud.ibm.com/ml/v1/text/chat_stream?version=2025-01-01');
  const body = JSON.parse(String(streamed.body));
  t.is(body.space_id, 'space-1');
  t.false('stream' in body || 'stream_options' in body || 'project_id' in body || 'model' in body);
});

test('no project or space is a 400 naming the header; the projectId param fills it; both headers at once are refused', (t) => {
  const missing = t.throws(() => plugin().operations.chat!.toUpstream(request, target({})), { instanceOf: GatewayError }) as GatewayError;
  t.is(missing.status, 400);
  t.like(missing.body, { param: 'x-gateway-watsonx-project-id', code: 'missing_required_header' });
  t.is(JSON.parse(String(plugin({ projectId: 'p-2' }).operations.chat!.toUpstream(request, target({})).body)).project_id, 'p-2');
  t.throws(() => plugin().operations.chat!.toUpstream(request, target({ 'x-gateway-watsonx-project-id': 'a', 'x-gateway-watsonx-space-id': 'b' })), { instanceOf: GatewayError });
});

test('tool_choice: a string travels as tool_choice_option, a named function as tool_choice; unknown fields are not sent', (t) => {
  const tools = [{ type: 'function' as const, function: { name: 'sum', parameters: { type: 'object' } } }];
  const auto = toWatsonxBody({ ...request, tools, tool_choice: 'auto', user: 'u-1', logit_bias: { 1: 1 } }, { project_id: 'p' });
  t.is(auto.tool_choice_option, 'auto');
  t.false('tool_choice' in auto || 'user' in auto || 'logit_bias' in auto);
  const named = toWatsonxBody({ ...request, tools, tool_choice: { type: 'function', function: { name: 'sum' } }, max_completion_tokens: 20, temperature: 0 }, { project_id: 'p' });
  t.deepEqual(named.tool_choice, { type: 'function', function: { name: 'sum' } });
  t.like(named, { max_completion_tokens: 20, temperature: 0, tools });
});

test('n > 1 is refused naming n; no token is a 401', (t) => {
  const error = t.throws(() => plugin().operations.chat!.validate!({ ...request, n: 3 }), { instanceOf: GatewayError }) as GatewayError;
  t.like(error.body, { param: 'n' });
  const auth = t.throws(() => plugin().auth({ method: 'POST', url: 'x', headers: {} }, { ...target(), credentials: {} }), { instanceOf: GatewayError }) as GatewayError;
  t.is(auth.status, 401);
  t.deepEqual(plugin().auth({ method: 'POST', url: 'x', headers: {} }, target()), { authorization: 'Bearer iam-access-token' });
});

test("the recorded answer maps without watsonx's own fields", (t) => {
  const answer = fromWatsonxResponse(JSON.parse(watsonxFixture('chat-response-text.json')), request);
  t.deepEqual(answer, {
    id: 'chatcmpl-5d8c131decbb6978cba5df10267aa3ff',
    object: 'chat.completion',
    created: 1749736055,
    model: 'ibm/granite-3-3-8b-instruct',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Ciao' }, finish_reason: 'stop' }],
    usage: { completion_tokens: 3, prompt_tokens: 38, total_tokens: 41 },
  });
});

test('the recorded stream maps to chunks and ends at the usage chunk; a stream without it has not ended', (t) => {
  const frames = watsonxFixture('chat-stream-text.txt').split('\n').filter(Boolean).map((line, index) => `id: ${index + 1}\nevent: message\ndata: ${line}\n\n`);
  const decoder = new SseDecoder();
  const mapper = createWatsonxStreamMapper(request);
  const steps = [...decoder.push(Buffer.from(frames.join(''))), ...decoder.end()].map((event) => mapper.map(event));
  const chunks = steps.flatMap((step) => (step.chunks ?? []) as ChatCompletionChunk[]);
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Ciao');
  t.deepEqual(chunks.at(-1)?.usage, { completion_tokens: 3, prompt_tokens: 38, total_tokens: 41 });
  t.false('model_id' in chunks[0]);
  t.deepEqual(steps.map((step) => step.done === true), [false, false, false, false, true]);
  t.like(mapper.map({ data: 'not json' }), { error: { code: 'malformed_stream' } });
});

test("watsonx's error envelope keeps the messages and the first code; the status names the type", (t) => {
  t.deepEqual(mapWatsonxError(reply(400, 'error-400.json')), {
    message: "Json document validation error: 'messages' is a required property",
    type: 'invalid_request_error',
    param: null,
    code: 'json_validation_error',
  });
  t.like(mapWatsonxError(reply(401, 'error-401.json')), { type: 'authentication_error', code: 'authentication_token_expired' });
  t.regex(mapWatsonxError({ status: 502, headers: {}, body: Buffer.from('<html>bad gateway</html>') }).message, /HTTP 502/);
});
