import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatRequest, ChatResponse, ProviderTarget } from '../../../core/spec/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { parasail } from './index.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(join(process.cwd(), 'plugins/providers/parasail/__fixtures__', name), 'utf8'));
const plugin = parasail().create(pluginDependencies());
const target: ProviderTarget = { baseUrl: plugin.baseUrl({}), customHost: false, headers: {}, credentials: { apiKey: 'test-key' }, strict: true };

test('chat goes to https://api.parasail.io/v1/chat/completions with the key as Bearer; the recorded answer maps', (t) => {
  const request: ChatRequest = { model: 'parasail-llama-33-70b-fp8', messages: [{ role: 'user', content: 'Hello' }], max_completion_tokens: 64 };
  const upstream = plugin.operations.chat!.toUpstream(request, target);
  t.is(upstream.url, 'https://api.parasail.io/v1/chat/completions');
  t.deepEqual(plugin.auth(upstream, target), { authorization: 'Bearer test-key' });
  const sent = JSON.parse(String(upstream.body)) as Record<string, unknown>;
  t.is(sent.max_completion_tokens, 64);
  const answer = plugin.operations.chat!.fromUpstream(fixture('chat-response.json'), request, target) as ChatResponse;
  t.is(answer.choices[0].message.content, 'Parasail serves open-weight models on rented GPUs.');
  t.is(answer.usage?.total_tokens, 27);
});
