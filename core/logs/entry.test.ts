import test from 'ava';
import { endUserOf } from './entry.js';

test('endUserOf reads the user field, or a Messages body’s metadata.user_id, capped at 256 characters', (t) => {
  t.is(endUserOf({ model: 'm', user: 'alice' }), 'alice');
  t.is(endUserOf({ model: 'm', metadata: { user_id: 'bob' } }), 'bob');
  t.is(endUserOf({ model: 'm', user: '' }), undefined);
  t.is(endUserOf({ model: 'm', user: 42 }), undefined);
  t.is(endUserOf({ model: 'm', metadata: null }), undefined);
  t.is(endUserOf(undefined), undefined);
  t.is(endUserOf({ user: 'x'.repeat(300) })?.length, 256);
});
