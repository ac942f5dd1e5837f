import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatRequest, ChatResponse, EmbeddingResponse, ProviderTarget } from '../../../core/spec/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { upstage } from './index.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(join(process.cwd(), 'plugins/providers/upstage/__fixtures__', name), 'utf8'));
const plugin = upstage().create(pluginDependencies());
const target: ProviderTarget = { baseUrl: plugin.baseUrl({}), customHost: false, headers: {}, credentials: { apiKey: 'test-key' }, strict: true };

test('chat goes to https://api.upstage.ai/v1/chat/completions with the key as Bearer; the recorded answer maps', (t) => {
  const request: ChatRequest = { model: 'solar-pro2', messages: [{ role: 'user', content: 'Hello' }], max_completion_tokens: 64 };
  const upstream = plugin.operations.chat!.toUpstream(request, target);
  t.is(upstream.url, 'https://api.upstage.ai/v1/chat/completions');
  t.deepEqual(plugin.auth(upstream, target), { authorization: 'Bearer test-key' });
  const sent = JSON.parse(String(upstream.body)) as Record<string, unknown>;
  t.is(sent.max_completion_tokens, 64);
  const answer = plugin.operations.chat!.fromUpstream(fixture('chat-response.json'), request, target) as ChatResponse;
  t.is(answer.choices[0].message.content, 'Solar is a family of large language models built by Upstage.');
  t.is(answer.usage?.total_tokens, 32);
});

test('embeddings go to /v1/embeddings; the recorded answer maps', (t) => {
  const upstream = plugin.operations.embed!.toUpstream({ model: 'embedding-query', input: 'Hello' }, target);
  t.is(upstream.url, 'https://api.upstage.ai/v1/embeddings');
  const answer = plugin.operations.embed!.fromUpstream(fixture('embeddings-response.json'), { model: 'embedding-query', input: 'Hello' }, target) as EmbeddingResponse;
  t.deepEqual(answer.data[0].embedding, [0.0123, -0.0456, 0.0789]);
  t.is(answer.usage.prompt_tokens, 5);
});
