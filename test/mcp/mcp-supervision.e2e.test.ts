import { fileURLToPath } from 'node:url';
import test from 'ava';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { FakeMcpServer, mcpClient } from './mcp-harness.js';

// A stdio server is restarted when it exits and its stderr is logged (redacted); tool lists are
// re-read every `mcp.refresh_ms` without an admin change.

const script = fileURLToPath(new URL('./fake-stdio-server.js', import.meta.url));
let gateway: TestGateway;
let fake: FakeMcpServer;

test.before(async () => {
  fake = await new FakeMcpServer().start();
  gateway = await startGateway({
    mcp: {
      refresh_ms: 1000,
      servers: [{ name: 'local', transport: 'stdio', command: process.execPath, args: [script], env: { FAKE_TOKEN: 'sk-supersecretvalue1234567890abcdef' } }],
    },
  });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.stop();
});

async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

test.serial('a stdio server that exits is restarted; its stderr is logged with secrets redacted', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'stdio', mcp: { servers: { local: { tools: ['*'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${key}` });
  const first = await client.callTool({ name: 'local__hello', arguments: {} });
  const firstText = (first.content as Array<{ text: string }>)[0].text;
  await client.callTool({ name: 'local__exit', arguments: {} });
  t.true(await eventually(async () => {
    const again = await client.callTool({ name: 'local__hello', arguments: {} });
    return (again.content as Array<{ text: string }>)[0].text !== firstText;
  }));
  const stderr = gateway.lines.filter((line) => line.msg === 'MCP server stderr' && line.server === 'local');
  t.true(stderr.length >= 2);
  t.regex(stderr[0].stderr, /fake stdio server started/);
  t.regex(stderr[0].stderr, /token \[REDACTED\]/);
  t.false(gateway.rawLog().includes('sk-supersecretvalue1234567890abcdef'));
  t.true(gateway.lines.some((line) => line.msg === 'MCP stdio server exited: restarting it'));
  await client.close();
});

test.serial('tool lists are re-read every refresh_ms without an admin change', async (t) => {
  fake.tools = [{ name: 'echo' }];
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'changing', transport: 'streamable-http', url: fake.url });
  t.is(created.status, 201);
  const { key } = await createKey(t, gateway, { name: 'refresh', mcp: { servers: { changing: { tools: ['*'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp/changing`, { authorization: `Bearer ${key}` });
  t.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['echo']);
  fake.tools = [{ name: 'echo' }, { name: 'added' }];
  t.true(await eventually(async () => (await client.listTools()).tools.map((tool) => tool.name).join() === 'echo,added'));
  t.deepEqual((await client.callTool({ name: 'added', arguments: { x: 1 } })).content, [{ type: 'text', text: '{"x":1}' }]);
  const shown = await admin(gateway, 'GET', `/admin/mcp-servers/${created.json.id}`);
  t.is(shown.json.version, 1);
  await client.close();
});
