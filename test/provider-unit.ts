import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { ChatRequest, ChatResponse, ProviderPlugin, ProviderRegistration, ProviderTarget } from '../core/spec/index.js';
import { pluginDependencies } from './plugin-dependencies.js';

/** A provider plugin made for a unit test: the plugin, the target of a request with key `test-key`, and its recorded fixtures. */
export interface ProviderUnit {
  readonly plugin: ProviderPlugin;
  readonly target: ProviderTarget;
  fixture(name: string): unknown;
}

/** Creates the provider outside a gateway; `fixture` reads `plugins/providers/<id>/__fixtures__/<name>`. */
export function providerUnit(registration: ProviderRegistration): ProviderUnit {
  const plugin = registration.create(pluginDependencies());
  const directory = join(process.cwd(), 'plugins/providers', registration.manifest.id, '__fixtures__');
  return {
    plugin,
    target: { baseUrl: plugin.baseUrl({}), customHost: false, headers: {}, credentials: { apiKey: 'test-key' }, strict: true },
    fixture: (name) => JSON.parse(readFileSync(join(directory, name), 'utf8')),
  };
}

/**
 * The chat case of a compatible provider: a request for `model` goes to `url` with the key as
 * Bearer and `max_completion_tokens` as sent; the recorded `chat-response.json` maps to `content`
 * and `totalTokens`.
 */
export function chatGoesAndMaps(t: ExecutionContext, unit: ProviderUnit, expected: { model: string; url: string; content: string; totalTokens: number }): void {
  const { plugin, target } = unit;
  const request: ChatRequest = { model: expected.model, messages: [{ role: 'user', content: 'Hello' }], max_completion_tokens: 64 };
  const upstream = plugin.operations.chat!.toUpstream(request, target);
  t.is(upstream.url, expected.url);
  t.deepEqual(plugin.auth(upstream, target), { authorization: 'Bearer test-key' });
  const sent = JSON.parse(String(upstream.body)) as Record<string, unknown>;
  t.is(sent.max_completion_tokens, 64);
  const answer = plugin.operations.chat!.fromUpstream(unit.fixture('chat-response.json'), request, target) as ChatResponse;
  t.is(answer.choices[0].message.content, expected.content);
  t.is(answer.usage?.total_tokens, expected.totalTokens);
}
