import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { PostgresResponseStore } from '../../core/api/protocols/responses/responses-store-postgres.js';
import { SqliteResponseStore } from '../../core/api/protocols/responses/responses-store-sqlite.js';
import { conversationOf, type ResponseStore, type StoredResponse } from '../../core/api/protocols/responses/responses-store.js';
import { resolveConfig } from '../../config/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { ACCOUNT_KEY, startGateway } from '../harness.js';
import { DATABASE_URL, dropSchemas, postgresReachable, uniqueSchema } from '../logs/fixtures.js';

/** Both Responses stores: owner scoping, the conversation chain, and retention by age. */

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-20T12:00:00Z');

const record = (id: string, owner: string, createdMs: number, previousId: string | null = null): StoredResponse => ({
  id,
  owner,
  createdMs,
  provider: 'anthropic',
  previousId,
  input: [{ id: `msg_in_${id}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: `question ${id}` }] }],
  response: { id, object: 'response', created_at: Math.floor(createdMs / 1000), status: 'completed', error: null, incomplete_details: null, model: 'm', output: [{ id: `msg_out_${id}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answer ${id}` }] }] },
});

async function exercise(t: import('ava').ExecutionContext, store: ResponseStore): Promise<void> {
  await store.put(record('resp_old', 'account', NOW - 3 * DAY));
  await store.put(record('resp_one', 'account', NOW - DAY / 2, 'resp_old'));
  await store.put(record('resp_two', 'account', NOW - DAY / 4, 'resp_one'));
  await store.put(record('resp_other', 'vk:key-b', NOW - DAY / 4));
  t.is((await store.get('account', 'resp_two'))?.previousId, 'resp_one');
  // A masked turn's sealed mapping is kept with it (and absent where none was stored).
  const mask = { v: 1 as const, kid: 'k1', wrappedKey: 'd3JhcHBlZA==', ciphertext: 'c2VhbGVk' };
  await store.put({ ...record('resp_masked', 'account', NOW - DAY / 4), mask });
  t.deepEqual((await store.get('account', 'resp_masked'))?.mask, mask);
  t.false('mask' in (await store.get('account', 'resp_two'))!);
  t.true(await store.delete('account', 'resp_masked'));
  t.is(await store.get('vk:key-b', 'resp_two'), undefined, 'another owner does not see it');
  t.false(await store.delete('vk:key-b', 'resp_two'));
  const chain = await conversationOf(store, 'account', 'resp_two', false);
  t.deepEqual(
    chain?.map((entry) => entry.item.id),
    ['msg_in_resp_old', 'msg_out_resp_old', 'msg_in_resp_one', 'msg_out_resp_one', 'msg_in_resp_two'],
  );
  t.is(chain?.[1].provider, 'anthropic');
  t.is(chain?.[0].provider, undefined);
  t.is(await conversationOf(store, 'vk:key-b', 'resp_two', true), undefined);

  // Retention of two days: the three-day-old response goes; the chain then starts after it.
  t.is(await store.prune(NOW), 1);
  t.is(await store.get('account', 'resp_old'), undefined);
  const shorter = await conversationOf(store, 'account', 'resp_two', true);
  t.deepEqual(shorter?.map((entry) => entry.item.id), ['msg_in_resp_one', 'msg_out_resp_one', 'msg_in_resp_two', 'msg_out_resp_two']);
  t.true(await store.delete('account', 'resp_two'));
  t.is(await store.get('account', 'resp_two'), undefined);
}

test('SQLite: owner scoping, conversation chain, retention', async (t) => {
  const store = new SqliteResponseStore(join(mkdtempSync(join(tmpdir(), 'responses-store-')), 'responses.db'), 2 * DAY);
  await store.init();
  try {
    await exercise(t, store);
  } finally {
    await store.close();
  }
});

test('PostgreSQL: owner scoping, conversation chain, retention', async (t) => {
  const reachable = await postgresReachable();
  if (!reachable.ok) {
    t.log(`skipped: PostgreSQL unreachable (${reachable.reason})`);
    t.pass();
    return;
  }
  const schema = uniqueSchema('responses');
  const store = new PostgresResponseStore(DATABASE_URL, schema, 2 * DAY);
  try {
    await store.init();
    await exercise(t, store);
  } finally {
    await store.close();
    await dropSchemas([schema]);
  }
});

test('no retention (0 days) keeps everything', async (t) => {
  const store = new SqliteResponseStore(join(mkdtempSync(join(tmpdir(), 'responses-store-')), 'responses.db'), 0);
  await store.init();
  await store.put(record('resp_ancient', 'account', NOW - 1000 * DAY));
  t.is(await store.prune(NOW), 0);
  t.truthy(await store.get('account', 'resp_ancient'));
  await store.close();
});

test('configuration: responses.retentionDays (env GATEWAY_RESPONSES_RETENTION_DAYS wins) and builtInTools', (t) => {
  const providers = [openai()];
  t.deepEqual(resolveConfig({ providers }, {}).responses, { builtInTools: 'drop', retentionMaxAgeMs: 30 * DAY });
  t.deepEqual(resolveConfig({ providers, responses: { retentionDays: 7, builtInTools: 'refuse' } }, {}).responses, { builtInTools: 'refuse', retentionMaxAgeMs: 7 * DAY });
  t.is(resolveConfig({ providers, responses: { retentionDays: 7 } }, { GATEWAY_RESPONSES_RETENTION_DAYS: '2' }).responses.retentionMaxAgeMs, 2 * DAY);
  t.throws(() => resolveConfig({ providers, responses: { builtInTools: 'ignore' as 'drop' } }, {}), { message: /responses.builtInTools/ });
  t.throws(() => resolveConfig({ providers, responses: { retentionDays: -1 } }, {}), { message: /responses.retentionDays/ });
});

test('a PostgreSQL that is down fails no start: the gateway serves, the store is retried on use', async (t) => {
  const gateway = await startGateway({}, { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
  try {
    t.true(gateway.lines.some((line) => String(line.msg).includes('the Responses store (postgres) did not open')));
    const response = await fetch(`${gateway.url}/v1/responses/resp_missing`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } });
    t.is(response.status, 500, 'the store cannot answer: an internal error, not a crash');
    const store = new PostgresResponseStore('postgres://postgres@127.0.0.1:1/none', 'public', DAY);
    await t.throwsAsync(store.get('account', 'resp_x'));
    await t.throwsAsync(store.get('account', 'resp_x'), undefined, 'tried again, not a cached failure');
    await store.close();
  } finally {
    await gateway.close();
  }
});
