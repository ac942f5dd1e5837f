import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import test from 'ava';
import { mayUseTool } from '../../core/mcp/grants.js';
import type { McpGrant } from '../../core/vault/records.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, clearRedisPrefix, createKey, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';
import { FakeMcpServer, mcpClient } from './mcp-harness.js';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// Two gateway instances sharing Redis: one session served by both, a grant changed on one seen by
// the other, and the grant property (listed set == callable set) under random changes on either.

const available = await redisAvailable();
const prefix = `mcp-test-${randomUUID().slice(0, 8)}`;
const environment = { REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: 'ef'.repeat(32) };
let a: TestGateway;
let b: TestGateway;
const fakes = new Map<string, FakeMcpServer>();
const serverIds = new Map<string, string>();
const TOOL_POOL = ['read_file', 'read_dir', 'write_file', 'search', 'delete_all', 'exec'];
const SERVER_NAMES = ['files', 'web', 'ops'];

test.before(async () => {
  if (!available) return;
  a = await startGateway({}, environment);
  b = await startGateway({}, environment);
  for (const name of SERVER_NAMES) {
    const fake = await new FakeMcpServer().start();
    fake.tools = TOOL_POOL.slice(0, 4).map((tool) => ({ name: tool }));
    fakes.set(name, fake);
    const created = await admin(a, 'POST', '/admin/mcp-servers', { name, transport: 'streamable-http', url: fake.url });
    if (created.status !== 201) throw new Error(`registering ${name}: ${created.text}`);
    serverIds.set(name, created.json.id);
  }
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  for (const fake of fakes.values()) await fake.stop();
  if (available) await clearRedisPrefix(prefix);
});

const run = available ? test.serial : test.skip;

/** An SDK client whose requests alternate between the two instances, as behind a round-robin load balancer. */
async function balancedClient(key: string): Promise<{ client: Client; hosts: string[] }> {
  const hosts: string[] = [];
  let turn = 0;
  const origins = [new URL(a.url).origin, new URL(b.url).origin];
  const balanced: typeof fetch = (input, init) => {
    const origin = origins[turn++ % 2];
    hosts.push(origin);
    const url = new URL(String(input instanceof Request ? input.url : input));
    return fetch(`${origin}${url.pathname}${url.search}`, init);
  };
  const client = new SdkClient({ name: 'balanced', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } }, fetch: balanced }));
  return { client, hosts };
}

run('two instances serve one session: requests alternate between them', async (t) => {
  const { key } = await createKey(t, a, { name: 'balanced', mcp: { servers: { files: { tools: ['read_*'] } } } });
  const { client, hosts } = await balancedClient(key);
  for (let round = 0; round < 3; round++) {
    t.deepEqual((await client.listTools()).tools.map((tool) => tool.name).sort(), ['files__read_dir', 'files__read_file']);
    const result = await client.callTool({ name: 'files__read_file', arguments: { round } });
    t.deepEqual(result.content, [{ type: 'text', text: JSON.stringify({ round }) }]);
  }
  t.true(new Set(hosts).size === 2);
  await client.close();
});

run('a cancellation sent to one instance stops the call running on the other', async (t) => {
  const { key } = await createKey(t, a, { name: 'cancelling', mcp: { servers: { files: { tools: ['*'] } } } });
  const { client } = await balancedClient(key);
  const fake = fakes.get('files')!;
  fake.tools = [...fake.tools, { name: 'slow' }];
  t.is((await admin(a, 'PUT', `/admin/mcp-servers/${serverIds.get('files')}`, { name: 'files', transport: 'streamable-http', url: fake.url })).status, 200);
  fake.slowMs = 5000;
  const before = fake.calls.length;
  const controller = new AbortController();
  const call = client.callTool({ name: 'files__slow', arguments: {} }, undefined, { signal: controller.signal });
  t.true(await eventually(async () => fake.calls.length > before));
  controller.abort();
  await t.throwsAsync(call);
  t.true(await eventually(async () => fake.notifications.some((notification) => notification.method === 'notifications/cancelled')));
  fake.tools = fake.tools.filter((tool) => tool.name !== 'slow');
  t.is((await admin(b, 'PUT', `/admin/mcp-servers/${serverIds.get('files')}`, { name: 'files', transport: 'streamable-http', url: fake.url })).status, 200);
  await client.close();
});

/** Polls until `check` holds (invalidation crosses Redis pub/sub), failing after a generous bound. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

run('a grant revoked on one instance is applied by the other', async (t) => {
  const { id, key } = await createKey(t, a, { name: 'revoked', mcp: { servers: { files: { tools: ['*'] } } } });
  const client = await mcpClient(`${b.url}/mcp`, { authorization: `Bearer ${key}` });
  t.true((await client.listTools()).tools.length > 0);
  await client.callTool({ name: 'files__search', arguments: {} });
  t.is((await admin(a, 'PATCH', `/admin/virtual-keys/${id}`, { mcp: { servers: { web: { tools: ['search'] } } } })).status, 200);
  t.true(await eventually(async () => (await client.listTools()).tools.every((tool) => tool.name.startsWith('web__'))));
  const error = await t.throwsAsync(client.callTool({ name: 'files__search', arguments: {} }), { instanceOf: McpError });
  t.is(error.code, -32602);
  await client.callTool({ name: 'web__search', arguments: {} });
  await client.close();
});

/** A small seeded generator, so a failure can be replayed (the seed is printed). */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const GLOBS = ['*', 'read_*', '*_file', 'search', 'exec', 'wr?te_file', 'delete_*'];

function randomGrant(random: () => number): McpGrant {
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  const servers: Record<string, { tools: string[]; deny?: string[] }> = {};
  for (const name of ['*', ...SERVER_NAMES]) {
    if (random() < 0.5) continue;
    servers[name] = { tools: Array.from({ length: 1 + Math.floor(random() * 2) }, () => pick(GLOBS)), ...(random() < 0.4 ? { deny: [pick(GLOBS)] } : {}) };
  }
  return { servers };
}

/** What the instance lists, and which of every name that could be asked for it lets the key call. */
async function listedAndCallable(client: Client): Promise<{ listed: string[]; callable: string[] }> {
  const listed = (await client.listTools()).tools.map((tool) => tool.name).sort();
  const callable: string[] = [];
  for (const server of SERVER_NAMES) {
    for (const tool of TOOL_POOL) {
      const name = `${server}__${tool}`;
      try {
        await client.callTool({ name, arguments: {} });
        callable.push(name);
      } catch (error) {
        if (!(error instanceof McpError) || error.code !== -32602) throw error;
      }
    }
  }
  return { listed, callable: callable.sort() };
}

run('grant property: for random grants, tools and changes on either instance, the listed set equals the callable set', async (t) => {
  const seed = Number(process.env.MCP_PROPERTY_SEED ?? Date.now() % 1_000_000);
  t.log(`seed ${seed}`);
  const random = generator(seed);
  // The first grant lists something and leaves something out, so the comparison is never only of empty sets.
  const { id, key } = await createKey(t, a, { name: 'property', mcp: { servers: { '*': { tools: ['*'], deny: ['exec'] }, ops: { tools: ['read_*'] } } } });
  const clients = [await mcpClient(`${a.url}/mcp`, { authorization: `Bearer ${key}` }), await mcpClient(`${b.url}/mcp`, { authorization: `Bearer ${key}` })];
  let grant = (await admin(a, 'GET', `/admin/virtual-keys/${id}`)).json.mcp as McpGrant;
  const tools = new Map(SERVER_NAMES.map((name) => [name, fakes.get(name)!.tools.map((tool) => tool.name)]));
  const expected = () =>
    SERVER_NAMES.flatMap((server) => tools.get(server)!.filter((tool) => mayUseTool({ grants: [grant] }, { name: server }, tool)).map((tool) => `${server}__${tool}`)).sort();
  let listedSome = false;
  for (let step = 0; step < 8; step++) {
    if (step === 0) {
      const { listed, callable } = await listedAndCallable(clients[1]);
      t.deepEqual(listed, callable);
      t.true(listed.includes('files__read_file') && !listed.includes('files__exec') && !listed.includes('ops__search'));
    }
    const instance = random() < 0.5 ? a : b;
    if (random() < 0.5) {
      grant = randomGrant(random);
      t.is((await admin(instance, 'PATCH', `/admin/virtual-keys/${id}`, { mcp: grant })).status, 200);
    } else {
      const server = SERVER_NAMES[Math.floor(random() * SERVER_NAMES.length)];
      const next = TOOL_POOL.filter(() => random() < 0.6);
      fakes.get(server)!.tools = next.map((tool) => ({ name: tool }));
      tools.set(server, next);
      const replaced = await admin(instance, 'PUT', `/admin/mcp-servers/${serverIds.get(server)}`, { name: server, transport: 'streamable-http', url: fakes.get(server)!.url });
      t.is(replaced.status, 200);
    }
    for (const client of clients) {
      // Once the change has reached the instance, what it lists is exactly what it lets the key call.
      t.true(await eventually(async () => JSON.stringify((await client.listTools()).tools.map((tool) => tool.name).sort()) === JSON.stringify(expected())), `step ${step}: the change reached the instance`);
      const { listed, callable } = await listedAndCallable(client);
      t.deepEqual(listed, callable, `step ${step}, seed ${seed}`);
      listedSome ||= listed.length > 0;
    }
  }
  t.true(listedSome);
  for (const client of clients) await client.close();
});
