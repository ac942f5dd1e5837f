import test from 'ava';
import { DashboardSessions } from './sessions.js';

test('a session lives until its expiry, then is gone', (t) => {
  let now = 1_000;
  const sessions = new DashboardSessions(500, 10, () => now);
  const { id, session } = sessions.create();
  t.is(session.expiresAt, 1_500);
  t.is(sessions.get(id), session);
  now = 1_499;
  t.truthy(sessions.get(id));
  now = 1_500;
  t.is(sessions.get(id), undefined);
  t.is(sessions.size, 0);
});

test('ids and CSRF tokens are random and distinct; unknown or deleted ids are refused', (t) => {
  const sessions = new DashboardSessions();
  const first = sessions.create();
  const second = sessions.create();
  t.not(first.id, second.id);
  t.not(first.session.csrfToken, second.session.csrfToken);
  t.true(first.id.length >= 43);
  t.is(sessions.get('not-a-session'), undefined);
  t.is(sessions.get(undefined), undefined);
  sessions.delete(first.id);
  t.is(sessions.get(first.id), undefined);
  t.truthy(sessions.get(second.id));
});

test('the number of sessions is bounded: the oldest goes first', (t) => {
  const sessions = new DashboardSessions(60_000, 3);
  const ids = Array.from({ length: 4 }, () => sessions.create().id);
  t.is(sessions.size, 3);
  t.is(sessions.get(ids[0]), undefined);
  for (const id of ids.slice(1)) t.truthy(sessions.get(id));
});

test('the CSRF check compares exactly', (t) => {
  const { session } = new DashboardSessions().create();
  t.true(DashboardSessions.csrfMatches(session, session.csrfToken));
  t.false(DashboardSessions.csrfMatches(session, ''));
  t.false(DashboardSessions.csrfMatches(session, `${session.csrfToken}x`));
  t.false(DashboardSessions.csrfMatches(session, session.csrfToken.slice(0, -1) + (session.csrfToken.endsWith('A') ? 'B' : 'A')));
});
