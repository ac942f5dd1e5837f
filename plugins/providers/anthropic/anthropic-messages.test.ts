import test from 'ava';
import type { ProviderTarget } from '../../../core/spec/index.js';
import { fixtureLines, providerFixture } from '../../../test/fakes/stream-fuzz.js';
import { anthropicMessages, createMessagesStreamMapper } from './anthropic-messages.js';

const target: ProviderTarget = {
  baseUrl: 'https://api.anthropic.com/v1',
  customHost: false,
  headers: { 'anthropic-version': '2026-10-21', 'anthropic-beta': 'context-1m-2025-08-07', 'x-other': 'no' },
  credentials: { apiKey: 'sk-ant-test' },
  strict: true,
};
const request = { model: 'claude-opus-4-7', max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hi' }] };

test('native Messages: the client bytes go up unchanged, with its version and beta headers only', (t) => {
  const original = Buffer.from(JSON.stringify(request));
  const upstream = anthropicMessages.toUpstream(request, target, original);
  t.is(upstream.url, 'https://api.anthropic.com/v1/messages');
  t.is(upstream.body, original);
  t.deepEqual(upstream.headers, { 'content-type': 'application/json', 'anthropic-version': '2026-10-21', 'anthropic-beta': 'context-1m-2025-08-07' });
  t.is(anthropicMessages.toUpstream(request, target).body, JSON.stringify(request), 'a changed body is serialised');
  t.is(anthropicMessages.countTokens!.toUpstream(request, target).url, 'https://api.anthropic.com/v1/messages/count_tokens');
});

test('native Messages: a Message is taken as received; a body without content is refused (the core answers 502)', (t) => {
  const message = JSON.parse(providerFixture('anthropic', 'chat-thinking.json'));
  t.is(anthropicMessages.fromUpstream(message, request, target), message);
  t.throws(() => anthropicMessages.fromUpstream({ type: 'message' }, request, target));
  t.throws(() => anthropicMessages.countTokens!.fromUpstream({}, request, target));
});

test('native Messages stream: every recorded event passes as it is, message_stop ends, an error event is the error', (t) => {
  const mapper = createMessagesStreamMapper();
  const lines = fixtureLines('anthropic', 'stream-thinking.txt');
  const steps = lines.map((line) => mapper.map({ data: line }));
  t.deepEqual(
    steps.flatMap((step) => step.chunks ?? []),
    lines.map((line) => JSON.parse(line)),
  );
  t.deepEqual(
    steps.map((step) => step.done === true),
    lines.map((line) => JSON.parse(line).type === 'message_stop'),
  );
  const failed = fixtureLines('anthropic', 'stream-error.txt').map((line) => createMessagesStreamMapper().map({ data: line })).find((step) => step.error);
  t.like(failed?.error, { type: 'overloaded_error' });
  t.like(createMessagesStreamMapper().map({ data: 'not json' }).error, { code: 'malformed_stream' });
});
