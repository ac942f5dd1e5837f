import test from 'ava';
import { keyReferences, withKeyReferences } from './key-references.js';
import { parseRoute } from './route.js';

const route = parseRoute({
  strategy: { mode: 'fallback' },
  targets: [
    { name: 'a', virtual_key: 'vk-value-a' },
    { name: 'n', route: { targets: [{ name: 'b', virtual_key: 'vk_id-b', weight: 2 }, { provider: 'openai' }] } },
  ],
  cache: { mode: 'semantic', embedding: { virtual_key: 'vk-value-a', model: 'e' } },
});

test('keyReferences lists every key a route names, nested targets and the embeddings target included, with its path', (t) => {
  t.deepEqual(keyReferences(route), [
    { reference: 'vk-value-a', path: 'targets[0].virtual_key' },
    { reference: 'vk_id-b', path: 'targets[1].route.targets[0].virtual_key' },
    { reference: 'vk-value-a', path: 'cache.embedding.virtual_key' },
  ]);
  t.deepEqual(keyReferences(parseRoute({ targets: [{ provider: 'openai' }] })), []);
});

test('withKeyReferences replaces each reference (asked once per distinct one), puts the hint after the key, keeps the rest; unchanged routes are the same object', async (t) => {
  const asked: string[] = [];
  const changed = await withKeyReferences(route, async (reference) => {
    asked.push(reference);
    return reference.startsWith('vk-') ? { virtual_key: 'vk_id-a', virtual_key_hint: 'vk-…e-a' } : undefined;
  });
  t.deepEqual(asked.sort(), ['vk-value-a', 'vk_id-b']);
  t.deepEqual(Object.keys(changed.targets[0]), ['name', 'virtual_key', 'virtual_key_hint']);
  t.deepEqual(changed.targets[0], { name: 'a', virtual_key: 'vk_id-a', virtual_key_hint: 'vk-…e-a' });
  t.deepEqual(changed.targets[1].route?.targets[0], { name: 'b', virtual_key: 'vk_id-b', weight: 2 });
  t.deepEqual(changed.cache?.embedding, { model: 'e', virtual_key: 'vk_id-a', virtual_key_hint: 'vk-…e-a' });
  t.deepEqual(changed.strategy, route.strategy);
  t.is(route.targets[0].virtual_key, 'vk-value-a', 'the route given is not changed');
  t.is(await withKeyReferences(route, async () => undefined), route);
});
