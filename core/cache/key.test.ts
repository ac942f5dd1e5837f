import test from 'ava';
import { GatewayError } from '../errors.js';
import { withoutDefaults } from './cacheable.js';
import { cacheControl } from './hook.js';
import { canonicalJson, digest, namespaceOf } from './key.js';

test('canonical JSON sorts keys at every depth and leaves array order alone', (t) => {
  t.is(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } }), '{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}');
  t.is(digest({ a: 1, b: 2 }), digest({ b: 2, a: 1 }));
  t.not(digest([1, 2]), digest([2, 1]));
});

test('withoutDefaults drops the stream flags, nulls and documented defaults only', (t) => {
  const body = { model: 'm', stream: true, stream_options: { include_usage: true }, temperature: 1, top_p: 0.5, n: 1, max_tokens: null, user: 'u' };
  t.deepEqual(withoutDefaults(body, { temperature: 1, top_p: 1, n: 1 }), { model: 'm', top_p: 0.5, user: 'u' });
});

test('namespaces: a key’s own, the account’s, or a shared one, never confused', (t) => {
  t.is(namespaceOf({ type: 'virtual-key', id: 'vk_1', name: 'one' }, undefined), 'key:vk_1');
  t.is(namespaceOf({ type: 'account' }, undefined), 'account');
  t.is(namespaceOf({ type: 'virtual-key', id: 'vk_1', name: 'one' }, 'team'), 'shared:team');
});

test('cacheControl reads x-gateway-cache first, then Cache-Control; a wrong value is a 400', (t) => {
  t.is(cacheControl({}), undefined);
  t.is(cacheControl({ 'x-gateway-cache': ' Refresh ' }), 'refresh');
  t.is(cacheControl({ 'x-gateway-cache': 'only-if-cached', 'cache-control': 'no-store' }), 'only-if-cached');
  t.is(cacheControl({ 'cache-control': 'max-age=0, no-cache' }), 'refresh');
  t.is(cacheControl({ 'cache-control': 'no-cache, no-store' }), 'no-store');
  t.is(cacheControl({ 'cache-control': 'only-if-cached' }), 'only-if-cached');
  const error = t.throws(() => cacheControl({ 'x-gateway-cache': 'bypass' }), { instanceOf: GatewayError });
  t.is(error.body.param, 'x-gateway-cache');
});
