import test from 'ava';
import Keyv from 'keyv';
import { DashboardSessions } from './sessions.js';

test('a session lives until its expiry, then is gone', async (t) => {
  let now = 1_000;
  const sessions = new DashboardSessions(500, 10, () => now);
  const { id, session } = await sessions.create();
  t.is(session.expiresAt, 1_500);
  t.is(await sessions.get(id), session);
  now = 1_499;
  t.truthy(await sessions.get(id));
  now = 1_500;
  t.is(await sessions.get(id), undefined);
  t.is(sessions.size, 0);
});

test('ids and CSRF tokens are random and distinct; unknown or deleted ids are refused', async (t) => {
  const sessions = new DashboardSessions();
  const first = await sessions.create();
  const second = await sessions.create();
  t.not(first.id, second.id);
  t.not(first.session.csrfToken, second.session.csrfToken);
  t.true(first.id.length >= 43);
  t.is(await sessions.get('not-a-session'), undefined);
  t.is(await sessions.get(undefined), undefined);
  await sessions.delete(first.id);
  t.is(await sessions.get(first.id), undefined);
  t.truthy(await sessions.get(second.id));
});

test('the number of sessions is bounded: the oldest goes first', async (t) => {
  const sessions = new DashboardSessions(60_000, 3);
  const ids: string[] = [];
  for (let i = 0; i < 4; i += 1) ids.push((await sessions.create()).id);
  t.is(sessions.size, 3);
  t.is(await sessions.get(ids[0]), undefined);
  for (const id of ids.slice(1)) t.truthy(await sessions.get(id));
});

test('the CSRF check compares exactly', async (t) => {
  const { session } = await new DashboardSessions().create();
  t.true(DashboardSessions.csrfMatches(session, session.csrfToken));
  t.false(DashboardSessions.csrfMatches(session, ''));
  t.false(DashboardSessions.csrfMatches(session, `${session.csrfToken}x`));
  t.false(DashboardSessions.csrfMatches(session, session.csrfToken.slice(0, -1) + (session.csrfToken.endsWith('A') ? 'B' : 'A')));
});

test('with a shared store, every process that shares it knows a session, and signing out ends it everywhere', async (t) => {
  const records = new Keyv();
  let now = 1_000;
  const first = new DashboardSessions(500, 10, () => now, () => records);
  const second = new DashboardSessions(500, 10, () => now, () => records);
  const { id, session } = await first.create();
  t.deepEqual(await second.get(id), session);
  t.is(first.size, 0, 'nothing is kept in memory');
  t.is(await records.get(`dashboard-session:${id}`), undefined, 'the store holds the id hashed, not the cookie');
  await second.delete(id);
  t.is(await first.get(id), undefined);
  const later = await first.create();
  now = 1_500;
  t.is(await second.get(later.id), undefined, 'expired');
});

test('a session made by single sign-on keeps its principal, in memory and in the shared records; an account-key session has none', async (t) => {
  const records = new Keyv();
  for (const sessions of [new DashboardSessions(), new DashboardSessions(60_000, 10, Date.now, () => records)]) {
    const signedOn = await sessions.create('user:ada@example.com');
    t.is((await sessions.get(signedOn.id))?.principal, 'user:ada@example.com');
    const withKey = await sessions.create();
    t.false('principal' in (await sessions.get(withKey.id))!);
  }
});
