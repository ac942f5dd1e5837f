import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import test from 'ava';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, clearRedisPrefix, createKey, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';
import { FakeMcpServer, mcpClient } from './mcp-harness.js';

// A grant changed through the admin API of one instance pushes `notifications/tools/list_changed`
// to the open /mcp sessions it affects on another instance (through the shared state's pub/sub):
// a team's grant to its keys' sessions, a key's grant to that key's, and to no one else's.

const available = await redisAvailable();
const prefix = `mcp-notify-${randomUUID().slice(0, 8)}`;
const environment = { REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: 'cd'.repeat(32) };
let a: TestGateway;
let b: TestGateway;
let fake: FakeMcpServer;

test.before(async () => {
  if (!available) return;
  fake = await new FakeMcpServer().start();
  a = await startGateway({}, environment);
  b = await startGateway({}, environment);
  const created = await admin(a, 'POST', '/admin/mcp-servers', { name: 'fake', transport: 'streamable-http', url: fake.url });
  if (created.status !== 201) throw new Error(created.text);
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  await fake?.stop();
  if (available) await clearRedisPrefix(prefix);
});

const run = available ? test.serial : test.skip;

/** An SDK client on instance b counting the tool-list notifications it gets, once its notification stream is open. */
async function listening(key: string, keyId: string): Promise<{ client: Client; changes: () => number; next: () => Promise<void> }> {
  const client = await mcpClient(`${b.url}/mcp`, { authorization: `Bearer ${key}` });
  let changes = 0;
  let waiting: (() => void) | undefined;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes += 1;
    waiting?.();
  });
  // The SDK opens the stream (GET /mcp) after initialization; instance b logs it when open.
  for (let attempt = 0; attempt < 500; attempt++) {
    if (b.entries().some((entry) => entry.keyId === keyId && entry.mcp?.method === 'stream' && entry.status === 200)) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const next = () => new Promise<void>((resolve) => (waiting = resolve));
  return { client, changes: () => changes, next };
}

const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

run("a team's grant changed on one instance: its keys' sessions on the other are told, and list the new tools at once; a key's grant: that key's alone", async (t) => {
  const team = await admin(a, 'POST', '/admin/teams', { name: `notified-${prefix}`, mcp: { servers: { fake: { tools: ['echo'] } } } });
  t.is(team.status, 201, team.text);
  const other = await admin(a, 'POST', '/admin/teams', { name: `untouched-${prefix}`, mcp: { servers: { fake: { tools: ['echo'] } } } });
  t.is(other.status, 201, other.text);
  const member = await createKey(t, a, { name: 'team-member', provider: 'openai', provider_key: 'sk-team-0123456789', team_id: team.json.id });
  const own = await createKey(t, a, { name: 'own-grant', mcp: { servers: { fake: { tools: ['echo'] } } } });
  const outsider = await createKey(t, a, { name: 'other-team', provider: 'openai', provider_key: 'sk-team-0123456789', team_id: other.json.id });
  const [memberClient, ownClient, outsiderClient] = [await listening(member.key, member.id), await listening(own.key, own.id), await listening(outsider.key, outsider.id)];
  t.deepEqual(await names(memberClient.client), ['fake__echo']);

  const teamTold = memberClient.next();
  const patched = await admin(a, 'PATCH', `/admin/teams/${team.json.id}`, { mcp: { servers: { fake: { tools: ['echo', 'fails'] } } } });
  t.is(patched.status, 200, patched.text);
  await teamTold;
  // Told, and the listing already has the new grant (the team's record read again, not a second later).
  t.deepEqual(await names(memberClient.client), ['fake__echo', 'fake__fails']);

  const keyTold = ownClient.next();
  const changed = await admin(a, 'PATCH', `/admin/virtual-keys/${own.id}`, { mcp: { servers: { fake: { tools: ['echo', 'slow'] } } } });
  t.is(changed.status, 200, changed.text);
  await keyTold;
  t.deepEqual(await names(ownClient.client), ['fake__echo', 'fake__slow']);

  // Both changes went out in order on one channel to one instance: had the team's change reached the
  // other sessions, they would have been told before the key's change reached its own.
  const revokedTold = memberClient.next();
  t.is((await admin(a, 'PATCH', `/admin/teams/${team.json.id}`, { mcp: null })).status, 200);
  await revokedTold;
  t.deepEqual(await names(memberClient.client), []);
  t.is(ownClient.changes(), 1, "the key's session was told of its own change only");
  t.is(outsiderClient.changes(), 0, "another team's key was not told");
  t.is(memberClient.changes(), 2);
  for (const { client } of [memberClient, ownClient, outsiderClient]) await client.close();
});
