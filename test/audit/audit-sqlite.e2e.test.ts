import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import test from 'ava';
import type { AuditEvent } from '../../core/audit/event.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { forgedAfter, gatewayCommand, jsonLines, ROW_COLUMNS, rowValues } from './audit-harness.js';

const PROVIDER_SECRET = 'sk-audit-provider-SECRET-0123456789';
const CREDENTIAL_SECRET = 'sk-audit-credential-SECRET-9876543210';
const WRONG_KEY = 'gw-wrong-account-key-SECRET-000';

const dataDir = join(mkdtempSync(join(tmpdir(), 'gateway-audit-e2e-')), 'data');
const environment = { GATEWAY_DATA_DIR: dataDir };
let gateway: TestGateway;

test.before(async () => {
  gateway = await startGateway({}, environment);
});
test.after.always(async () => {
  await gateway?.close();
});

const admin = async (path: string, headers: Record<string, string> = { 'x-gateway-api-key': ACCOUNT_KEY }) => fetch(`${gateway.url}${path}`, { headers });
const events = async (query = ''): Promise<{ data: AuditEvent[]; next_cursor: string | null }> => (await (await admin(`/admin/audit${query}`)).json()) as never;
const signIn = (apiKey: string) =>
  fetch(`${gateway.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'audit-test-browser/1.0' }, body: JSON.stringify({ api_key: apiKey }) });

test.serial('dashboard sign-ins and refused sign-ins are recorded with where they came from; GET /admin/audit filters and pages them', async (t) => {
  t.is((await signIn(WRONG_KEY)).status, 401);
  const signedIn = await signIn(ACCOUNT_KEY);
  t.is(signedIn.status, 201);
  const { data } = await events('?action=dashboard.sign-in');
  t.deepEqual(
    data.map((event) => [event.seq, event.outcome, event.actor.type, event.address, event.user_agent, event.target]),
    [
      [2, 'success', 'account', '127.0.0.1', 'audit-test-browser/1.0', null],
      [1, 'denied', 'account', '127.0.0.1', 'audit-test-browser/1.0', null],
    ],
  );
  // Signing out is recorded too (with the session's CSRF token; a stranger's sign-out is not an event).
  const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0];
  const { csrf_token: csrf } = (await signedIn.json()) as { csrf_token: string };
  t.is((await fetch(`${gateway.url}/dashboard/session`, { method: 'DELETE', headers: { cookie, 'x-gateway-csrf': csrf } })).status, 204);
  t.is((await fetch(`${gateway.url}/dashboard/session`, { method: 'DELETE' })).status, 204);
  const signedOut = (await events('?action=dashboard.sign-out')).data;
  t.deepEqual(signedOut.map((event) => [event.seq, event.outcome]), [[3, 'success']]);
  t.deepEqual(Object.keys(data[0]).sort(), ['action', 'actor', 'address', 'changes', 'hash', 'id', 'outcome', 'prev_hash', 'seq', 'target', 'time', 'user_agent']);
  t.is(data[0].prev_hash, data[1].hash);
  // Paging: one per page, newest first.
  const first = await events('?limit=2');
  t.deepEqual(first.data.map((event) => event.seq), [3, 2]);
  const second = await events(`?limit=2&cursor=${first.next_cursor}`);
  t.deepEqual(second.data.map((event) => event.seq), [1]);
  t.is(second.next_cursor, null);
  t.deepEqual((await events('?actor=account&since=2000-01-01T00:00:00Z')).data.length, 3);
  t.deepEqual((await events('?until=2000-01-01T00:00:00Z')).data, []);
  // The guard and the query checks.
  t.is((await admin('/admin/audit', {})).status, 401);
  const badLimit = await admin('/admin/audit?limit=0');
  t.is(badLimit.status, 400);
  t.like(((await badLimit.json()) as { error: object }).error, { param: 'limit', code: 'invalid_query' });
  t.is((await admin('/admin/audit?cursor=nope')).status, 400);
  t.is((await admin('/admin/audit?since=yesterday')).status, 400);
});

test.serial("the command line's changes are recorded in the gateway's trail, with their changes and never a secret", async (t) => {
  const credential = await gatewayCommand(['credentials', 'create', '--name', 'audit-cred', '--stdin', '--json'], environment, JSON.stringify({ api_key: CREDENTIAL_SECRET }));
  t.is(credential.code, 0, credential.stderr);
  const credentialId = (JSON.parse(credential.stdout) as { id: string }).id;
  const created = await gatewayCommand(['keys', 'create', '--name', 'audit-key', '--provider', 'openai', '--rpm', '5', '--stdin', '--json'], environment, PROVIDER_SECRET);
  t.is(created.code, 0, created.stderr);
  const key = JSON.parse(created.stdout) as { id: string; key: string };
  const updated = await gatewayCommand(['keys', 'update', key.id, '--rpm', '9', '--name', 'audit-key-2'], environment);
  t.is(updated.code, 0, updated.stderr);
  const missing = await gatewayCommand(['keys', 'delete', 'vk_missing'], environment);
  t.is(missing.code, 1);
  const reset = await gatewayCommand(['reset-account-key', '--json'], environment);
  t.is(reset.code, 0, reset.stderr);
  const newAccountKey = (JSON.parse(reset.stdout) as { account_key: string }).account_key;

  const { data: all } = await events('?actor=cli');
  t.deepEqual(all[0].target, { type: 'account-key', id: 'account' });
  t.is(all[0].action, 'account-key.reset');
  const data = all.slice(1);
  t.deepEqual(
    data.map((event) => [event.action, event.outcome, event.target?.type, event.target?.id]),
    [
      ['keys.delete', 'failure', 'virtual-key', 'vk_missing'],
      ['keys.update', 'success', 'virtual-key', key.id],
      ['keys.create', 'success', 'virtual-key', key.id],
      ['credentials.create', 'success', 'credential', credentialId],
    ],
  );
  t.like(data[1].changes, { limits: { before: { requests_per_minute: 5 }, after: { requests_per_minute: 9 } }, name: { before: 'audit-key', after: 'audit-key-2' } });
  t.deepEqual(Object.keys(data[1].changes!).sort(), ['limits', 'name', 'updated_at'], 'only the fields that changed');
  t.like(data[2].changes, { name: { after: 'audit-key' }, provider: { after: 'openai' } });
  t.is(data[2].address, null);
  // Secrets: not in the answers, not in the database's bytes.
  const stored = ['audit.db', 'audit.db-wal'].map((file) => {
    try {
      return readFileSync(join(dataDir, file)).toString('latin1');
    } catch {
      return '';
    }
  });
  const everything = JSON.stringify((await events('?limit=500')).data) + stored.join('');
  t.true(everything.includes('audit-key-2'));
  for (const secret of [PROVIDER_SECRET, CREDENTIAL_SECRET, key.key, ACCOUNT_KEY, WRONG_KEY, newAccountKey]) t.false(everything.includes(secret), 'a secret was stored');
});

test.serial('audit export and GET /admin/audit/export give the whole chain as JSON Lines, oldest first; audit verify exits 0', async (t) => {
  const verified = await gatewayCommand(['audit', 'verify'], environment);
  t.is(verified.code, 0, verified.stderr);
  const total = (await events('?limit=500')).data.length;
  t.regex(verified.stdout, new RegExp(`^audit chain whole: ${total} events, last seq ${total} \\(hash [0-9a-f]{64}\\)`));
  const exported = await gatewayCommand(['audit', 'export'], environment);
  t.is(exported.code, 0, exported.stderr);
  const lines = jsonLines(exported.stdout);
  t.deepEqual(lines.map((event) => event.seq), Array.from({ length: total }, (_, index) => index + 1));
  const response = await admin('/admin/audit/export');
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /application\/x-ndjson/);
  t.deepEqual(jsonLines(await response.text()), lines);
  const document = (await (await fetch(`${gateway.url}/admin/openapi.json`)).json()) as { paths: Record<string, unknown>; components: { schemas: Record<string, { required: string[] }> } };
  t.truthy(document.paths['/admin/audit']);
  t.truthy(document.paths['/admin/audit/export']);
  t.deepEqual([...document.components.schemas.AuditEvent.required].sort(), Object.keys(lines[0]).sort(), 'the document names every field an event has');
  const json = await gatewayCommand(['audit', 'verify', '--json'], environment);
  t.like(JSON.parse(json.stdout), { ok: true, count: total });
  t.is((await gatewayCommand(['audit', 'check'], environment)).code, 2);
});

/** Runs `audit verify` as a child process: its exit code and what it printed. */
const verify = () => gatewayCommand(['audit', 'verify'], environment);

test.serial('changing, deleting or inserting one row in the database makes audit verify exit 1 naming the seq and id of the first bad event', async (t) => {
  const chain = jsonLines((await gatewayCommand(['audit', 'export'], environment)).stdout);
  t.true(chain.length >= 5);
  const database = new DatabaseSync(join(dataDir, 'audit.db'));
  const insert = database.prepare(`INSERT INTO audit_events (${ROW_COLUMNS.join(', ')}) VALUES (${ROW_COLUMNS.map(() => '?').join(', ')})`);
  try {
    // Changed: event 3's outcome.
    database.prepare("UPDATE audit_events SET outcome = 'denied', changes = NULL WHERE seq = 3").run();
    const changed = await verify();
    t.is(changed.code, 1);
    t.regex(changed.stderr, new RegExp(`seq 3, id ${chain[2].id}: event 3 was changed`));
    database.prepare('DELETE FROM audit_events WHERE seq = 3').run();
    insert.run(...(rowValues(chain[2]) as SQLInputValue[]));
    t.is((await verify()).code, 0, 'put back, the chain is whole again');

    // Removed: event 4.
    database.prepare('DELETE FROM audit_events WHERE seq = 4').run();
    const removed = await verify();
    t.is(removed.code, 1);
    t.regex(removed.stderr, /seq 4, id \(removed\): event 4 was removed/);
    insert.run(...(rowValues(chain[3]) as SQLInputValue[]));
    t.is((await verify()).code, 0);

    // Inserted: a well-formed event after 2, the later ones renumbered to make room.
    for (const event of [...chain].reverse().filter((event) => event.seq >= 3)) database.prepare('UPDATE audit_events SET seq = seq + 1 WHERE seq = ?').run(event.seq);
    const forged = forgedAfter(chain[1], 3);
    insert.run(...(rowValues(forged) as SQLInputValue[]));
    const inserted = await verify();
    t.is(inserted.code, 1);
    t.regex(inserted.stderr, /seq 3, id forged-3: event 3 was inserted/);
  } finally {
    database.close();
  }
});
