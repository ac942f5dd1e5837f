import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import test from 'ava';
import { auditChanges, canonicalJson, eventHash, GENESIS_HASH, RETENTION_ACTION } from './event.js';
import { SqliteAuditStore } from './sqlite-store.js';
import { AuditTrail, monthStart } from './trail.js';

/** A clock the test moves. */
const clockAt = (start: number) => {
  let now = start;
  return { now: () => now, set: (time: number) => void (now = time), advance: (ms: number) => void (now += ms) };
};

function newTrail(start = Date.UTC(2026, 10, 28, 12), retentionMonths = 0) {
  const path = join(mkdtempSync(join(tmpdir(), 'gateway-audit-')), 'audit.db');
  const clock = clockAt(start);
  return { path, clock, trail: new AuditTrail(new SqliteAuditStore(path), { clock, retentionMonths }) };
}

const signIn = (outcome: 'success' | 'denied' = 'success') => ({ actor: { type: 'account' as const, label: 'account key' }, action: 'dashboard.sign-in', outcome, address: '127.0.0.1' });

test('record builds one chain: seq from 1 without gaps, each event carrying the previous hash and its own over the canonical form', async (t) => {
  const { trail, clock } = newTrail();
  const first = await trail.record(signIn());
  clock.advance(1000);
  const second = await trail.record({ actor: { type: 'cli', label: 'ops' }, action: 'keys.create', target: { type: 'virtual-key', id: 'vk_1' }, outcome: 'success' });
  t.is(first.seq, 1);
  t.is(first.prev_hash, GENESIS_HASH);
  t.is(second.seq, 2);
  t.is(second.prev_hash, first.hash);
  t.is(second.time, new Date(Date.UTC(2026, 10, 28, 12, 0, 1)).toISOString());
  t.regex(first.hash, /^[0-9a-f]{64}$/);
  t.is(first.hash, eventHash(first));
  t.notDeepEqual(eventHash({ ...first, action: 'dashboard.sign-out' }), first.hash);
  t.deepEqual(first.target, null);
  t.deepEqual(second.target, { type: 'virtual-key', id: 'vk_1' });
  t.deepEqual(await trail.verify(), { ok: true, count: 2, head: { seq: 2, hash: second.hash } });
  await trail.close();
});

test('canonicalJson sorts keys at every depth and leaves out undefined members', (t) => {
  t.is(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: undefined, x: null }], c: 'é' } }), '{"a":{"c":"é","d":[1,{"x":null,"z":1}]},"b":1}');
  t.is(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }));
});

test('list pages newest first with an opaque next_cursor, and filters by actor, action, target and time', async (t) => {
  const { trail, clock } = newTrail();
  for (let index = 0; index < 7; index++) {
    await trail.record({ actor: { type: index % 2 ? 'cli' : 'account', id: index % 2 ? 'ops' : undefined }, action: index < 4 ? 'keys.create' : 'credentials.delete', target: { type: 'virtual-key', id: `vk_${index}` }, outcome: 'success' });
    clock.advance(60_000);
  }
  const pages: number[][] = [];
  let cursor: string | undefined;
  do {
    const page = await trail.list({ limit: 3, cursor });
    pages.push(page.data.map((event) => event.seq));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  t.deepEqual(pages, [[7, 6, 5], [4, 3, 2], [1]]);
  t.deepEqual((await trail.list({ action: 'keys.*' })).data.map((event) => event.seq), [4, 3, 2, 1]);
  t.deepEqual((await trail.list({ action: 'credentials.delete' })).data.map((event) => event.seq), [7, 6, 5]);
  t.deepEqual((await trail.list({ actor: 'cli:ops' })).data.map((event) => event.seq), [6, 4, 2]);
  t.deepEqual((await trail.list({ actor: 'account' })).data.map((event) => event.seq), [7, 5, 3, 1]);
  t.deepEqual((await trail.list({ target: 'virtual-key:vk_3' })).data.map((event) => event.seq), [4]);
  t.deepEqual((await trail.list({ target: 'vk_5' })).data.map((event) => event.seq), [6]);
  const start = Date.UTC(2026, 10, 28, 12);
  t.deepEqual((await trail.list({ since: start + 120_000, until: start + 240_000 })).data.map((event) => event.seq), [4, 3]);
  const error = await t.throwsAsync(trail.list({ cursor: 'not-a-cursor' }));
  t.regex(error.message, /cursor/);
  await trail.close();
});

test('auditChanges keeps the changed fields only and never a secret, at any depth, not even hashed', (t) => {
  const before = { name: 'a', rpm: 5, key_hash: 'h1', limits: { budget_usd: 1 }, fields: { region: 'eu', secret_access_key: 'AKIA-1' }, sealed: { kid: 'k', wrappedKey: 'w', ciphertext: 'c' } };
  const after = { name: 'b', rpm: 5, key_hash: 'h2', key: 'vk-live-value', limits: { budget_usd: 2 }, fields: { region: 'us', secret_access_key: 'AKIA-2' }, webhook: 'https://hook', api_key: 'sk-x', access_token: 't', password: 'p' };
  const changes = auditChanges(before, after, { secretFields: ['webhook'] });
  t.deepEqual(changes, {
    fields: { before: { region: 'eu' }, after: { region: 'us' } },
    limits: { before: { budget_usd: 1 }, after: { budget_usd: 2 } },
    name: { before: 'a', after: 'b' },
  });
  t.true(JSON.stringify(auditChanges({ hook: 'x' }, { hook: 'https://hook' })).includes('https://hook'), 'a field is kept unless named a secret');
  t.deepEqual(auditChanges(undefined, { id: 'c1', name: 'n', api_key: 'sk-1' }), { id: { after: 'c1' }, name: { after: 'n' } });
  t.deepEqual(auditChanges({ id: 'c1' }, undefined), { id: { before: 'c1' } });
});

test('record removes secrets from the changes it is given, whatever the caller did', async (t) => {
  const { trail, path } = newTrail();
  const event = await trail.record({
    actor: { type: 'cli' },
    action: 'credentials.create',
    target: { type: 'credential', id: 'cred_1' },
    changes: { name: { after: 'prod' }, api_key: { after: 'sk-live-SECRET-1' }, nested: { after: { token: 'tok-SECRET-2', kept: 1 } }, sealed: { after: { kid: 'k', wrappedKey: 'w', ciphertext: 'SECRET-3' } } },
    outcome: 'success',
  });
  t.deepEqual(event.changes, { name: { after: 'prod' }, nested: { after: { kept: 1 } } });
  await trail.close();
  const bytes = [path, `${path}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file).toString('latin1')).join('');
  t.true(bytes.includes('prod'));
  for (const secret of ['sk-live-SECRET-1', 'tok-SECRET-2', 'SECRET-3']) t.false(bytes.includes(secret), secret);
});

test('verify names the first event changed, removed or inserted in the database', async (t) => {
  const setUp = async () => {
    const made = newTrail();
    for (let index = 0; index < 5; index++) await made.trail.record({ ...signIn(), target: { type: 'session-holder', id: `n${index}` } });
    return { ...made, events: (await made.trail.list({})).data.reverse() };
  };
  // Changed: one field of event 3.
  {
    const { trail, path, events } = await setUp();
    const database = new DatabaseSync(path);
    database.prepare("UPDATE audit_events SET outcome = 'denied' WHERE seq = 3").run();
    t.like(await trail.verify(), { ok: false, seq: 3, id: events[2].id, problem: 'changed' });
    database.close();
    await trail.close();
  }
  // Removed: event 2.
  {
    const { trail, path } = await setUp();
    const database = new DatabaseSync(path);
    database.prepare('DELETE FROM audit_events WHERE seq = 2').run();
    t.like(await trail.verify(), { ok: false, seq: 2, id: null, problem: 'removed' });
    // The first ones: seq 1 missing too.
    database.prepare('DELETE FROM audit_events WHERE seq = 1').run();
    t.like(await trail.verify(), { ok: false, seq: 1, problem: 'removed' });
    database.close();
    await trail.close();
  }
  // Inserted: a well-formed event after 2, the later ones renumbered to make room.
  {
    const { trail, path, events } = await setUp();
    const database = new DatabaseSync(path);
    for (const seq of [5, 4, 3]) database.prepare('UPDATE audit_events SET seq = seq + 1 WHERE seq = ?').run(seq);
    const forged = { ...events[1], id: 'forged-id', seq: 3, prev_hash: events[1].hash, action: 'keys.delete' };
    const sealed = { ...forged, hash: eventHash(forged) };
    database
      .prepare('INSERT INTO audit_events (seq, id, time, time_ms, actor, actor_type, action, target, outcome, address, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(3, sealed.id, sealed.time, Date.parse(sealed.time), canonicalJson(sealed.actor), 'account', sealed.action, canonicalJson(sealed.target), sealed.outcome, sealed.address, sealed.prev_hash, sealed.hash);
    t.like(await trail.verify(), { ok: false, seq: 3, id: 'forged-id', problem: 'inserted' });
    database.close();
    await trail.close();
  }
  // Replaced: event 3 rewritten with a hash that matches its new contents; event 4 no longer points at it.
  {
    const { trail, path, events } = await setUp();
    const database = new DatabaseSync(path);
    const rewritten = { ...events[2], outcome: 'denied' as const };
    database.prepare('UPDATE audit_events SET outcome = ?, hash = ? WHERE seq = 3').run('denied', eventHash(rewritten));
    t.like(await trail.verify(), { ok: false, seq: 3, id: events[2].id, problem: 'changed' });
    database.close();
    await trail.close();
  }
  // Inserted with a made-up hash, the later ones renumbered: the inserted one is named, not the next.
  {
    const { trail, path, events } = await setUp();
    const database = new DatabaseSync(path);
    for (const seq of [5, 4]) database.prepare('UPDATE audit_events SET seq = seq + 1 WHERE seq = ?').run(seq);
    database
      .prepare("INSERT INTO audit_events (seq, id, time, time_ms, actor, actor_type, action, outcome, prev_hash, hash) VALUES (4, 'naive-id', ?, 0, '{\"type\":\"account\"}', 'account', 'keys.delete', 'success', ?, 'made-up')")
      .run(events[2].time, events[2].hash);
    t.like(await trail.verify(), { ok: false, seq: 4, id: 'naive-id', problem: 'inserted' });
    database.close();
    await trail.close();
  }
  // Inserted at the end with a made-up hash.
  {
    const { trail, path } = await setUp();
    const database = new DatabaseSync(path);
    database
      .prepare("INSERT INTO audit_events (seq, id, time, time_ms, actor, actor_type, action, outcome, prev_hash, hash) VALUES (6, 'tail-id', '2026-11-28T12:00:00.000Z', 0, '{\"type\":\"account\"}', 'account', 'keys.delete', 'success', 'x', 'y')")
      .run();
    t.like(await trail.verify(), { ok: false, seq: 6, id: 'tail-id' });
    database.close();
    await trail.close();
  }
});

test('retention removes whole months from the start, records it in the chain, and the chain still verifies from the anchor', async (t) => {
  const { trail, clock, path } = newTrail(Date.UTC(2026, 5, 10), 2);
  // Two events in June, two in July, two in August, one in November.
  for (const month of [5, 5, 6, 6, 7, 7]) {
    clock.set(Date.UTC(2026, month, 15));
    await trail.record(signIn());
  }
  clock.set(Date.UTC(2026, 7, 20));
  t.is(await trail.retain(), undefined, 'nothing is older than June (two months before August)');
  clock.set(Date.UTC(2026, 10, 3));
  const retention = await trail.retain();
  t.truthy(retention);
  t.is(retention!.action, RETENTION_ACTION);
  t.is(retention!.seq, 7);
  t.is(monthStart(Date.UTC(2026, 10, 3), 2), Date.UTC(2026, 8, 1));
  // Everything before September went: June, July, August.
  t.like(retention!.changes, { removed_events: { after: 6 }, removed_through_seq: { after: 6 }, removed_before: { after: '2026-09-01T00:00:00.000Z' } });
  t.deepEqual((await trail.list({})).data.map((event) => event.seq), [7]);
  await trail.record(signIn('denied'));
  t.like(await trail.verify(), { ok: true, count: 2 });
  // A second pass months later removes the first retention event too, and records a new anchor.
  clock.set(Date.UTC(2027, 3, 1));
  const again = await trail.retain();
  t.like(again!.changes, { removed_through_seq: { after: 8 } });
  t.like(await trail.verify(), { ok: true, count: 1 });
  await trail.record(signIn());
  await trail.record(signIn());
  t.like(await trail.verify(), { ok: true, count: 3 });
  // Removing kept events is still found, the retention event itself included.
  const database = new DatabaseSync(path);
  database.prepare('DELETE FROM audit_events WHERE seq = 10').run();
  t.like(await trail.verify(), { ok: false, seq: 10, problem: 'removed' });
  database.prepare('DELETE FROM audit_events WHERE seq = 9').run();
  t.like(await trail.verify(), { ok: false, problem: 'removed' });
  database.close();
  await trail.close();
});

test('the trail has no method that updates or deletes one event', (t) => {
  const methods = [AuditTrail.prototype, SqliteAuditStore.prototype].flatMap((prototype) => Object.getOwnPropertyNames(prototype));
  t.deepEqual(
    methods.filter((name) => /update|delete|remove(?!Before)|edit|replace/i.test(name)),
    [],
  );
  const source = readFileSync(join(import.meta.dirname, '../../../core/audit/sqlite-store.ts'), 'utf8') + readFileSync(join(import.meta.dirname, '../../../core/audit/postgres-store.ts'), 'utf8');
  t.false(/UPDATE\s/i.test(source), 'no UPDATE statement');
  t.deepEqual(source.match(/DELETE FROM[^`']*/gi)?.map((statement) => statement.replace(/\$\{this\.table\}/, 'audit_events').trim()), ['DELETE FROM audit_events WHERE seq <= ?', 'DELETE FROM audit_events WHERE seq <= $1']);
});
