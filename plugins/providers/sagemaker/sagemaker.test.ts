import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import type { ChatCompletionChunk, ChatRequest, ChatResponse, ProviderTarget, UpstreamEvent } from '../../../core/spec/index.js';
import { verifySigV4 } from '../../shared/aws-sigv4/verify.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { mapSageMakerError } from './sagemaker-error.js';
import { FAKE_ENDPOINT, FAKE_REGION, FAKE_SECRET_ACCESS_KEY, payloadParts, sageMakerFixture, streamException } from './sagemaker-fake.js';
import { sagemaker } from './index.js';

const plugin = sagemaker().create(pluginDependencies());
const base = `https://runtime.sagemaker.${FAKE_REGION}.amazonaws.com`;
const headers = { 'x-gateway-cloud-c-secret-access-key': FAKE_SECRET_ACCESS_KEY, 'x-gateway-cloud-c-region': FAKE_REGION };
const target = (extra: Record<string, string> = {}): ProviderTarget => ({ baseUrl: base, customHost: false, headers: { ...headers, ...extra }, credentials: { apiKey: 'AKIATESTSAGEMAKER001' }, strict: true });
const request: ChatRequest = { model: FAKE_ENDPOINT, messages: [{ role: 'user', content: 'What is SageMaker?' }], max_tokens: 64 };

/** Runs a stream of eventstream frames through the plugin's decoder and mapper. */
function streamed(frames: Buffer[]): { chunks: ChatCompletionChunk[]; done: boolean; error?: unknown } {
  const decoder = plugin.operations.chat!.stream!.createDecoder!();
  const mapper = plugin.operations.chat!.stream!.createMapper({ ...request, stream: true }, target());
  const events: UpstreamEvent[] = [...frames.flatMap((frame) => decoder.push(frame)), ...decoder.end()];
  const chunks: ChatCompletionChunk[] = [];
  for (const event of events) {
    const step = mapper.map(event);
    chunks.push(...(step.chunks ?? []));
    if (step.error) return { chunks, done: false, error: step.error };
    if (step.done) return { chunks, done: true };
  }
  return { chunks, done: false };
}

test('the region names the runtime host; the endpoint is the model, in the path; the body has no model', (t) => {
  t.is(plugin.baseUrl(headers), base);
  const plain = plugin.operations.chat!.toUpstream(request, target());
  t.is(plain.url, `${base}/endpoints/${FAKE_ENDPOINT}/invocations`);
  t.deepEqual(JSON.parse(String(plain.body)), { messages: request.messages, max_tokens: 64 });
  const stream = plugin.operations.chat!.toUpstream({ ...request, stream: true }, target());
  t.is(stream.url, `${base}/endpoints/${FAKE_ENDPOINT}/invocations-response-stream`);
  t.like(JSON.parse(String(stream.body)), { stream: true, stream_options: { include_usage: true } });
  const component = plugin.operations.chat!.toUpstream(request, target({ 'x-gateway-sagemaker-inference-component': 'llama-ic-1' }));
  t.is(component.headers['x-amzn-sagemaker-inference-component'], 'llama-ic-1');
  t.like((t.throws(() => plugin.operations.chat!.toUpstream({ ...request, model: '../admin' }, target()), { instanceOf: GatewayError }) as GatewayError).body, { param: 'model' });
});

test('requests are signed with SigV4 for the sagemaker service; without a secret they are refused', (t) => {
  const upstream = plugin.operations.chat!.toUpstream(request, target({ 'x-gateway-sagemaker-inference-component': 'llama-ic-1' }));
  const signed = plugin.auth(upstream, target());
  const received = { method: 'POST', url: new URL(upstream.url).pathname, headers: { ...upstream.headers, ...signed, host: new URL(base).host }, body: Buffer.from(String(upstream.body)) };
  t.deepEqual(verifySigV4(received, { accessKeyId: 'AKIATESTSAGEMAKER001', secretAccessKey: FAKE_SECRET_ACCESS_KEY }, { region: FAKE_REGION, service: 'sagemaker' }), []);
  t.regex(signed.authorization, /SignedHeaders=[^,]*x-amzn-sagemaker-inference-component/, 'the inference component is signed');
  const missing = t.throws(() => plugin.auth(upstream, { ...target(), headers: {} }), { instanceOf: GatewayError }) as GatewayError;
  t.is(missing.status, 401);
});

test("the recorded answer maps, with the endpoint as the model (TGI says 'tgi')", (t) => {
  const answer = plugin.operations.chat!.fromUpstream(JSON.parse(sageMakerFixture('invocations-response.json')), request, target()) as ChatResponse;
  t.is(answer.model, FAKE_ENDPOINT);
  t.is(answer.choices[0].message.content, 'SageMaker runs the model behind a real-time endpoint.');
  t.is(answer.usage?.total_tokens, 35);
});

test('a recorded stream cut into PayloadParts anywhere (inside a line, inside a character) reads whole', (t) => {
  const sse = Buffer.from(sageMakerFixture('stream-tgi-messages.sse').split('\n').filter(Boolean).map((line) => `${line}\n\n`).join(''));
  for (const size of [1, 5, 9, 64]) {
    const { chunks, done } = streamed(payloadParts(sse, size));
    t.true(done, `size ${size}`);
    t.is(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join(''), 'Café crème 😀', `size ${size}`);
    t.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
  }
});

test('JSON lines without data: prefixes read the same', (t) => {
  const lines = Buffer.from(sageMakerFixture('stream-tgi-messages.sse').replace(/^data: /gm, ''));
  const { chunks, done } = streamed(payloadParts(lines, 7));
  t.true(done);
  t.is(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join(''), 'Café crème 😀');
});

test('a ModelStreamError ends the stream with its message and code', (t) => {
  const first = Buffer.from(`${sageMakerFixture('stream-tgi-messages.sse').split('\n')[0]}\n\n`);
  const { chunks, error } = streamed([...payloadParts(first), streamException('ModelStreamError', { Message: 'The model stopped responding.', ErrorCode: 'ModelStreamError' })]);
  t.is(chunks.length, 1);
  t.like(error, { message: 'The model stopped responding.', code: 'ModelStreamError' });
});

test("a container's failure (424 ModelError) keeps the container's message", (t) => {
  const error = mapSageMakerError({ status: 424, headers: { 'x-amzn-errortype': 'ModelError:http://internal.amazon.com/coral/com.amazon.sagemaker/' }, body: Buffer.from(sageMakerFixture('error-model-error.json')) });
  t.is(error.code, 'ModelError');
  t.regex(error.message, /Input validation error/);
  t.like(mapSageMakerError({ status: 429, headers: { 'x-amzn-errortype': 'ThrottlingException' }, body: Buffer.from('{"message":"Rate exceeded"}') }), { code: 'ThrottlingException', message: 'Rate exceeded', type: 'rate_limit_error' });
});
