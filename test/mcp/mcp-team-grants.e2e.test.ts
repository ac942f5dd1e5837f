import test from 'ava';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { FakeMcpServer, mcpClient } from './mcp-harness.js';

// A team holds an MCP grant too: a key's effective grant is its own and its team's together, less
// what either denies; a change to the team's grant reaches its keys within a second.

let gateway: TestGateway;
let fake: FakeMcpServer;

test.before(async () => {
  fake = await new FakeMcpServer().start();
  gateway = await startGateway();
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'fake', transport: 'streamable-http', url: fake.url });
  if (created.status !== 201) throw new Error(created.text);
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.stop();
});

const toolNames = async (key: string): Promise<string[]> => {
  const client = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${key}` });
  try {
    return (await client.listTools()).tools.map((tool) => tool.name).sort();
  } finally {
    await client.close();
  }
};

async function team(t: import('ava').ExecutionContext, name: string, mcp: unknown): Promise<string> {
  const created = await admin(gateway, 'POST', '/admin/teams', { name, mcp });
  t.is(created.status, 201, created.text);
  t.deepEqual(created.json.mcp, mcp);
  return created.json.id;
}

test.serial("a key without a grant of its own lists and calls its team's tools; revoking the team's grant applies within a second", async (t) => {
  const teamId = await team(t, 'agents', { servers: { fake: { tools: ['echo', 'fails'] } } });
  const { key } = await createKey(t, gateway, { name: 'team-key', provider: 'openai', provider_key: 'sk-team-0123456789', team_id: teamId });
  t.deepEqual(await toolNames(key), ['fake__echo', 'fake__fails']);
  const client = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${key}` });
  const result = await client.callTool({ name: 'fake__echo', arguments: { from: 'team' } });
  t.deepEqual(result.content, [{ type: 'text', text: '{"from":"team"}' }]);

  const revoked = await admin(gateway, 'PATCH', `/admin/teams/${teamId}`, { mcp: null });
  t.is(revoked.status, 200, revoked.text);
  t.is(revoked.json.mcp, undefined);
  // The open session: the tool is gone (as if it never existed) once the team's record is read again.
  const deadline = Date.now() + 5000;
  let listed = (await client.listTools()).tools.length;
  while (listed > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    listed = (await client.listTools()).tools.length;
  }
  t.is(listed, 0);
  const refused = await client.callTool({ name: 'fake__echo', arguments: {} }).catch((error: { code?: number }) => error);
  t.is((refused as { code?: number }).code, -32602);
  await client.close();
  // A new session: the key holds no grant at all any more.
  const initialize = await fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  });
  t.is(initialize.status, 403);
  t.like(await initialize.json(), { error: { code: 'mcp_not_granted' } });
});

test.serial("the key's and the team's grants add up, and a deny of either wins", async (t) => {
  const teamId = await team(t, 'careful', { servers: { fake: { tools: ['echo'], deny: ['big'] } } });
  const { key } = await createKey(t, gateway, { name: 'own-and-team', provider: 'openai', provider_key: 'sk-team-0123456789', team_id: teamId, mcp: { servers: { '*': { tools: ['big', 'fails'], deny: ['echo'] } } } });
  // echo: the team allows it, the key denies it; big: the key allows it, the team denies it; fails: the key's alone.
  t.deepEqual(await toolNames(key), ['fake__fails']);
  const patched = await admin(gateway, 'PATCH', `/admin/teams/${teamId}`, { mcp: { servers: { fake: { tools: ['slow'] } } } });
  t.is(patched.status, 200, patched.text);
  const deadline = Date.now() + 5000;
  let names = await toolNames(key);
  while (names.length !== 3 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    names = await toolNames(key);
  }
  t.deepEqual(names, ['fake__big', 'fake__fails', 'fake__slow']);
});

test.serial('a team grant is validated like a key grant', async (t) => {
  const refused = await admin(gateway, 'POST', '/admin/teams', { name: 'bad-grant', mcp: { servers: { fake: { tools: 'echo' } } } });
  t.is(refused.status, 400);
  t.regex(refused.json.error.param, /^mcp\.servers\.fake\.tools/);
});
