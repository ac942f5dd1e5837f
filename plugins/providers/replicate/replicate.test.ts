import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import type { ChatRequest, ChatResponse, ProviderTarget, UpstreamEvent } from '../../../core/spec/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { mapReplicateError } from './replicate-error.js';
import { replicateFixture } from './replicate-fake.js';
import { replicate } from './index.js';

const clock = { now: () => 1_764_376_862_000 };
const plugin = replicate().create({ ...pluginDependencies(), clock });
const chat = plugin.operations.chat!;
const target: ProviderTarget = { baseUrl: 'https://api.replicate.com/v1', customHost: false, headers: {}, credentials: { apiKey: 'r8_token' }, strict: true };
const request: ChatRequest = {
  model: 'meta/meta-llama-3-8b-instruct',
  messages: [
    { role: 'system', content: 'Answer in one sentence.' },
    { role: 'user', content: 'What is a prediction on Replicate?' },
  ],
  max_tokens: 64,
};
const fixture = (name: string): unknown => JSON.parse(replicateFixture(name));
const body = (upstream: { body?: unknown }) => JSON.parse(String(upstream.body)) as { version?: string; input: Record<string, unknown> };

test('an official model runs at /models/{owner}/{name}/predictions, waited for, the token as Bearer', (t) => {
  const upstream = chat.toUpstream(request, target);
  t.is(upstream.url, 'https://api.replicate.com/v1/models/meta/meta-llama-3-8b-instruct/predictions');
  t.is(upstream.headers.prefer, 'wait');
  t.deepEqual(body(upstream), { input: { prompt: 'What is a prediction on Replicate?', system_prompt: 'Answer in one sentence.', max_tokens: 64 } });
  t.deepEqual(plugin.auth(upstream, target), { authorization: 'Bearer r8_token' });
});

test('a model version runs at /predictions with the version', (t) => {
  const version = 'a'.repeat(64);
  const upstream = chat.toUpstream({ ...request, model: `someone/fine-tune:${version}` }, target);
  t.is(upstream.url, 'https://api.replicate.com/v1/predictions');
  t.is(body(upstream).version, version);
  t.like((t.throws(() => chat.toUpstream({ ...request, model: 'no-owner' }, target), { instanceOf: GatewayError }) as GatewayError).body, { param: 'model' });
});

test('a conversation becomes a labelled transcript; stop sequences a comma-separated list', (t) => {
  const input = body(
    chat.toUpstream(
      {
        model: 'meta/meta-llama-3-8b-instruct',
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'Sunny.' },
        ],
        stop: ['END', '###'],
        max_completion_tokens: 10,
      },
      target,
    ),
  ).input;
  t.is(input.prompt, 'User: Weather in Paris?\n\nAssistant: [called get_weather({"city":"Paris"})]\n\nTool: Sunny.\n\nAssistant:');
  t.is(input.stop_sequences, 'END,###');
  t.is(input.max_tokens, 10);
});

test('what the models cannot take is refused with a 400 naming it', (t) => {
  const tools = [{ type: 'function' as const, function: { name: 'f', parameters: {} } }];
  t.like((t.throws(() => chat.validate!({ ...request, tools }), { instanceOf: GatewayError }) as GatewayError).body, { param: 'tools', code: 'unsupported_parameter' });
  t.like((t.throws(() => chat.validate!({ ...request, n: 2 }), { instanceOf: GatewayError }) as GatewayError).body, { param: 'n' });
  t.like((t.throws(() => chat.validate!({ ...request, stop: 'a,b' }), { instanceOf: GatewayError }) as GatewayError).body, { param: 'stop' });
});

test('the recorded prediction maps: its tokens joined, its counts as usage, length when the limit was reached', (t) => {
  const answer = chat.fromUpstream(fixture('prediction-succeeded.json'), request, target) as ChatResponse;
  t.is(answer.choices[0].message.content, 'A prediction is one run of a model on Replicate.');
  t.is(answer.choices[0].finish_reason, 'stop');
  t.deepEqual(answer.usage, { prompt_tokens: 24, completion_tokens: 11, total_tokens: 35 });
  t.is(answer.created, 1_764_376_862);
  t.is((chat.fromUpstream(fixture('prediction-succeeded.json'), { ...request, max_tokens: 11 }, target) as ChatResponse).choices[0].finish_reason, 'length');
});

test('a failed prediction is a 502 with its error; one still running a 504', (t) => {
  const failed = t.throws(() => chat.fromUpstream(fixture('prediction-failed.json'), request, target), { instanceOf: GatewayError }) as GatewayError;
  t.is(failed.status, 502);
  t.regex(failed.body.message, /CUDA out of memory/);
  const running = t.throws(() => chat.fromUpstream(fixture('prediction-starting.json'), request, target), { instanceOf: GatewayError }) as GatewayError;
  t.is(running.status, 504);
});

test('the recorded prediction stream (urls.stream) maps to chunks and ends on done', (t) => {
  const mapper = chat.stream!.createMapper({ ...request, stream: true }, target);
  const events = replicateFixture('stream-output.jsonl').split('\n').filter(Boolean).map((line) => JSON.parse(line) as UpstreamEvent);
  const steps = events.map((event) => mapper.map(event));
  t.is(steps.flatMap((step) => step.chunks ?? []).map((chunk) => chunk.choices[0]?.delta?.content ?? '').join(''), 'A prediction is one run.');
  t.is(steps.at(-1)?.chunks?.[0].choices[0].finish_reason, 'stop');
  t.true(steps.at(-1)?.done);
  t.like(mapper.map({ event: 'done', data: '{"reason":"canceled"}' }).error, { code: 'upstream_generation_failed' });
});

test("Replicate's problem documents keep detail and the invalid field", (t) => {
  t.deepEqual(mapReplicateError({ status: 422, headers: {}, body: Buffer.from(replicateFixture('error-422.json')) }), {
    message: '- input.max_tokens: Must be less than or equal to 8192',
    type: 'invalid_request_error',
    param: 'input.max_tokens',
    code: null,
  });
  t.like(mapReplicateError({ status: 401, headers: {}, body: Buffer.from('{"title":"Unauthenticated","detail":"You did not pass a valid authentication token","status":401}') }), { type: 'authentication_error' });
});
