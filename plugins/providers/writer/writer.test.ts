import test from 'ava';
import type { ChatRequest, ChatResponse } from '../../../core/spec/index.js';
import { providerUnit } from '../../../test/provider-unit.js';
import { writer } from './index.js';

const { plugin, target, fixture } = providerUnit(writer());

test('chat goes to https://api.writer.com/v1/chat with the key as Bearer; the recorded answer maps', (t) => {
  const request: ChatRequest = { model: 'palmyra-x5', messages: [{ role: 'user', content: 'Hello' }], max_completion_tokens: 64 };
  const upstream = plugin.operations.chat!.toUpstream(request, target);
  t.is(upstream.url, 'https://api.writer.com/v1/chat');
  t.deepEqual(plugin.auth(upstream, target), { authorization: 'Bearer test-key' });
  const sent = JSON.parse(String(upstream.body)) as Record<string, unknown>;
  t.is(sent.max_tokens, 64, 'Writer documents max_tokens only');
  t.false('max_completion_tokens' in sent);
  const answer = plugin.operations.chat!.fromUpstream(fixture('chat-response.json'), request, target) as ChatResponse;
  t.is(answer.choices[0].message.content, 'Palmyra X5 is the newest model in the Palmyra family.');
  t.is(answer.usage?.total_tokens, 34);
});
