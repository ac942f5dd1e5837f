import test from 'ava';
import pg from 'pg';
import type { AuditEvent } from '../../core/audit/event.js';
import { PostgresAuditStore } from '../../core/audit/postgres-store.js';
import { AuditTrail } from '../../core/audit/trail.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { DATABASE_URL, dropSchemas, postgresReachable, uniqueSchema } from '../logs/fixtures.js';
import { forgedAfter, gatewayCommand, jsonLines, ROW_COLUMNS, rowValues } from './audit-harness.js';

const postgres = await postgresReachable();
if (!postgres.ok) console.log(`PostgreSQL audit tests skipped: ${postgres.reason}`);
const schema = uniqueSchema('audit');
const retentionSchema = uniqueSchema('audit_retention');
const PROVIDER_SECRET = 'sk-audit-pg-provider-SECRET-0123456789';
/** What `llm-gateway audit …` needs to open the gateways' store: the same database and schema. */
const cliEnvironment = { DATABASE_URL, GATEWAY_LOG_PG_SCHEMA: schema };
const pgTest = postgres.ok ? test.serial : test.serial.skip;

let gateways: TestGateway[] = [];
let client: pg.Client;

test.before(async () => {
  if (!postgres.ok) return;
  client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  gateways = await Promise.all([0, 1].map(() => startGateway({ logs: { postgresSchema: schema } }, { DATABASE_URL })));
});
test.after.always(async () => {
  await Promise.all(gateways.map((gateway) => gateway.close()));
  await client?.end();
  if (postgres.ok) await dropSchemas([schema, retentionSchema]);
});

const rows = async (): Promise<AuditEvent[]> => jsonLines((await gatewayCommand(['audit', 'export'], cliEnvironment)).stdout);

pgTest('two gateways on one PostgreSQL appending at once keep one valid chain', async (t) => {
  const record = (gateway: TestGateway, index: number) =>
    gateway.gateway.audit.record({ actor: { type: 'account' }, action: 'keys.create', target: { type: 'virtual-key', id: `vk_${index}` }, outcome: 'success' });
  const signIn = (gateway: TestGateway) =>
    fetch(`${gateway.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: ACCOUNT_KEY }) });
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, index) => {
      const gateway = gateways[index % 2];
      return index % 5 === 0 ? signIn(gateway).then((response) => response.status) : record(gateway, index).then(() => 201);
    }),
  );
  t.true(answers.every((status) => status === 201));
  const chain = await rows();
  t.is(chain.length, 30);
  t.deepEqual(chain.map((event) => event.seq), Array.from({ length: 30 }, (_, index) => index + 1));
  for (let index = 1; index < chain.length; index++) t.is(chain[index].prev_hash, chain[index - 1].hash);
  t.is(new Set(chain.map((event) => event.id)).size, 30);
  const verified = await gatewayCommand(['audit', 'verify'], cliEnvironment);
  t.is(verified.code, 0, verified.stderr);
  t.regex(verified.stdout, /^audit chain whole: 30 events/);
  // Both instances read the same trail.
  const [first, second] = await Promise.all(
    gateways.map(async (gateway) => (await (await fetch(`${gateway.url}/admin/audit?limit=5&action=dashboard.sign-in`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).json()) as { data: AuditEvent[] }),
  );
  t.is(first.data.length, 5);
  t.deepEqual(first, second);
});

pgTest('the command line records in the PostgreSQL trail, never a secret', async (t) => {
  const environment = { ...cliEnvironment, GATEWAY_DATA_DIR: gateways[0].gateway.config.dataDir };
  const created = await gatewayCommand(['keys', 'create', '--name', 'pg-key', '--provider', 'openai', '--stdin', '--json'], environment, PROVIDER_SECRET);
  t.is(created.code, 0, created.stderr);
  const key = JSON.parse(created.stdout) as { id: string; key: string };
  const stored = await client.query(`SELECT * FROM ${schema}.audit_events WHERE action = 'keys.create' AND target_id = $1`, [key.id]);
  t.is(stored.rows.length, 1);
  t.is(stored.rows[0].actor_type, 'cli');
  const everything = JSON.stringify((await client.query(`SELECT * FROM ${schema}.audit_events`)).rows);
  t.true(everything.includes('pg-key'));
  for (const secret of [PROVIDER_SECRET, key.key, ACCOUNT_KEY]) t.false(everything.includes(secret), 'a secret was stored');
});

pgTest('changing, deleting or inserting one row in PostgreSQL makes audit verify exit 1 naming the seq and id', async (t) => {
  const chain = await rows();
  const table = `${schema}.audit_events`;
  const insert = (event: AuditEvent) => client.query(`INSERT INTO ${table} (${ROW_COLUMNS.join(', ')}) VALUES (${ROW_COLUMNS.map((_, index) => `$${index + 1}`).join(', ')})`, rowValues(event));
  const verify = () => gatewayCommand(['audit', 'verify'], cliEnvironment);

  await client.query(`UPDATE ${table} SET address = '10.0.0.1' WHERE seq = 7`);
  const changed = await verify();
  t.is(changed.code, 1);
  t.regex(changed.stderr, new RegExp(`seq 7, id ${chain[6].id}: event 7 was changed`));
  await client.query(`DELETE FROM ${table} WHERE seq = 7`);
  await insert(chain[6]);
  t.is((await verify()).code, 0);

  await client.query(`DELETE FROM ${table} WHERE seq = 12`);
  const removed = await verify();
  t.is(removed.code, 1);
  t.regex(removed.stderr, /seq 12, id \(removed\): event 12 was removed/);
  await insert(chain[11]);
  t.is((await verify()).code, 0);

  await client.query(`UPDATE ${table} SET seq = -seq WHERE seq >= 20`);
  await client.query(`UPDATE ${table} SET seq = -seq + 1 WHERE seq <= -20`);
  await insert(forgedAfter(chain[18], 20));
  const inserted = await verify();
  t.is(inserted.code, 1);
  t.regex(inserted.stderr, /seq 20, id forged-20: event 20 was inserted/);
});

pgTest('retention on PostgreSQL removes whole months, records it, and the chain verifies from its anchor', async (t) => {
  let now = Date.UTC(2026, 0, 10);
  const trail = new AuditTrail(new PostgresAuditStore(DATABASE_URL, retentionSchema), { clock: { now: () => now }, retentionMonths: 1 });
  try {
    for (const month of [0, 0, 1, 2, 3]) {
      now = Date.UTC(2026, month, 12);
      await trail.record({ actor: { type: 'user', id: 'u_1' }, action: 'teams.update', outcome: 'success' });
    }
    // In April, one whole month (March) is kept before it: January and February go.
    const retention = await trail.retain();
    t.like(retention, { seq: 6, action: 'audit.retention', changes: { removed_events: { after: 3 }, removed_through_seq: { after: 3 } } });
    t.like(await trail.verify(), { ok: true, count: 3 });
    const cli = await gatewayCommand(['audit', 'verify'], { DATABASE_URL, GATEWAY_LOG_PG_SCHEMA: retentionSchema });
    t.is(cli.code, 0, cli.stderr);
    t.regex(cli.stdout, /^audit chain whole: 3 events, last seq 6/);
    await client.query(`DELETE FROM ${retentionSchema}.audit_events WHERE seq = 4`);
    const broken = await gatewayCommand(['audit', 'verify'], { DATABASE_URL, GATEWAY_LOG_PG_SCHEMA: retentionSchema });
    t.is(broken.code, 1);
    t.regex(broken.stderr, /seq 4, id \(removed\)/);
  } finally {
    await trail.close();
  }
});
