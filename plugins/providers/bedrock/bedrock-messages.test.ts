import test from 'ava';
import type { ProviderTarget } from '../../../core/spec/index.js';
import { EventStreamDecoder, encodeEvent, encodeException } from './bedrock-eventstream.js';
import { bedrockMessages } from './bedrock-messages.js';

const target: ProviderTarget = { baseUrl: 'https://bedrock-runtime.eu-west-1.amazonaws.com', customHost: false, headers: { 'anthropic-beta': 'a-1, b-2' }, credentials: { apiKey: 'AKIA' }, strict: true };
const model = 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0';
const request = { model, max_tokens: 64, stream: true, messages: [{ role: 'user' as const, content: 'Hi' }] };

test('Claude model ids (bare, cross-region, ARN) are native; other models are not', (t) => {
  t.true(bedrockMessages.accepts!('anthropic.claude-3-5-haiku-20241022-v1:0'));
  t.true(bedrockMessages.accepts!(model));
  t.true(bedrockMessages.accepts!('arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.anthropic.claude-opus-4-1-20250805-v1:0'));
  t.false(bedrockMessages.accepts!('amazon.nova-pro-v1:0'));
  t.false(bedrockMessages.accepts!('meta.llama3-70b-instruct-v1:0'));
});

test('InvokeModel body: no model or stream, the Bedrock anthropic_version, beta headers as anthropic_beta', (t) => {
  const upstream = bedrockMessages.toUpstream(request, target);
  t.is(upstream.url, `https://bedrock-runtime.eu-west-1.amazonaws.com/model/${encodeURIComponent(model)}/invoke-with-response-stream`);
  t.deepEqual(JSON.parse(String(upstream.body)), { anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: request.messages, anthropic_beta: ['a-1', 'b-2'] });
  const count = bedrockMessages.countTokens!.toUpstream({ model, messages: request.messages }, target);
  t.true(count.url.endsWith('/count-tokens'));
  const invoke = JSON.parse(Buffer.from(JSON.parse(String(count.body)).input.invokeModel.body, 'base64').toString('utf8'));
  t.like(invoke, { anthropic_version: 'bedrock-2023-05-31', messages: request.messages });
  t.deepEqual(bedrockMessages.countTokens!.fromUpstream({ inputTokens: 17 }, { model, messages: [] }, target), { input_tokens: 17 });
});

test('InvokeModelWithResponseStream: chunk frames decode to Messages events; an exception frame ends with its error', (t) => {
  const events = [
    { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model, usage: { input_tokens: 3, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
    { type: 'message_stop' },
  ];
  const wire = Buffer.concat([...events.map((event) => encodeEvent('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64') })), encodeException('throttlingException', 'Slow down')]);
  const decoder = new EventStreamDecoder();
  const mapper = bedrockMessages.stream!.createMapper(request, target);
  // Split the frames across reads.
  const decoded = [...decoder.push(wire.subarray(0, 50)), ...decoder.push(wire.subarray(50)), ...decoder.end()];
  const steps = decoded.map((event) => mapper.map(event));
  t.deepEqual(steps.flatMap((step) => step.chunks ?? []), events);
  t.true(steps[5].done);
  t.like(steps[6].error, { type: 'rate_limit_error', message: 'Slow down' });
});
