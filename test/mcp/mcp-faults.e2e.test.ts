import { McpError } from '@modelcontextprotocol/sdk/types.js';
import test from 'ava';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { FakeMcpServer, mcpClient } from './mcp-harness.js';

let gateway: TestGateway;
let fake: FakeMcpServer;
let serverId: string;
let key: string;
const SECRET = 'upstream-secret-token-0123456789';

test.before(async (t) => {
  fake = await new FakeMcpServer().start();
  gateway = await startGateway();
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'fake-mcp', api_key: SECRET });
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', {
    name: 'fake',
    transport: 'streamable-http',
    url: fake.url,
    credential: credential.json.id,
    headers: { 'x-team': 'tools' },
    timeout_ms: 500,
    max_result_bytes: 10_000,
  });
  if (created.status !== 201) throw new Error(`registering the fake: ${created.status} ${created.text}`);
  serverId = created.json.id;
  ({ key } = await createKey(t, gateway, { name: 'faults', mcp: { servers: { fake: { tools: ['*'] } } } }));
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.stop();
});

const client = () => mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${key}` });

test.serial('the credential goes upstream as a Bearer token with the headers; answers and logs never show it', async (t) => {
  const mcp = await client();
  await mcp.callTool({ name: 'fake__echo', arguments: { said: 'hi' } });
  await mcp.close();
  const sent = fake.headers.at(-1)!;
  t.is(sent.authorization, `Bearer ${SECRET}`);
  t.is(sent['x-team'], 'tools');
  const shown = await admin(gateway, 'GET', `/admin/mcp-servers/${serverId}`);
  t.false(shown.text.includes(SECRET));
  t.deepEqual(shown.json.headers, { 'x-team': '[hidden]' });
  t.false(gateway.rawLog().includes(SECRET));
  t.false(gateway.rawLog().includes(key));
});

test.serial('credential_header sends the raw secret in that header', async (t) => {
  const other = await new FakeMcpServer().start();
  t.teardown(() => other.stop());
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'raw-mcp', api_key: 'raw-secret-value-9876' });
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'raw', transport: 'streamable-http', url: other.url, credential: credential.json.id, credential_header: 'x-api-key' });
  t.is(created.status, 201);
  t.is(created.json.status, 'ok');
  t.is(other.headers.at(-1)!['x-api-key'], 'raw-secret-value-9876');
  t.is(other.headers.at(-1)!.authorization, undefined);
});

test.serial('a tool result with isError is passed through as a result, not turned into a JSON-RPC error', async (t) => {
  const mcp = await client();
  const result = await mcp.callTool({ name: 'fake__fails', arguments: {} });
  t.true(result.isError);
  t.deepEqual(result.content, [{ type: 'text', text: 'the tool failed' }]);
  await mcp.close();
});

test.serial('an upstream time-out is a JSON-RPC error naming the server', async (t) => {
  const mcp = await client();
  const error = await t.throwsAsync(mcp.callTool({ name: 'fake__slow', arguments: {} }), { instanceOf: McpError });
  t.is(error.code, -32001);
  t.regex(error.message, /MCP server "fake" did not answer within 500 ms/);
  await mcp.close();
});

test.serial('a result over max_result_bytes is an error, never a partial result', async (t) => {
  const mcp = await client();
  fake.bigBytes = 5000;
  const small = await mcp.callTool({ name: 'fake__big', arguments: {} });
  t.is((small.content as Array<{ text: string }>)[0].text.length, 5000);
  fake.bigBytes = 20_000;
  const error = await t.throwsAsync(mcp.callTool({ name: 'fake__big', arguments: {} }), { instanceOf: McpError });
  t.regex(error.message, /MCP server "fake".*over its max_result_bytes \(10000\)/);
  await mcp.close();
});

test.serial('malformed JSON-RPC and a crashing server are errors naming the server; the next call works', async (t) => {
  const mcp = await client();
  const garbage = await t.throwsAsync(mcp.callTool({ name: 'fake__garbage', arguments: {} }), { instanceOf: McpError });
  t.regex(garbage.message, /MCP server "fake"/);
  const crash = await t.throwsAsync(mcp.callTool({ name: 'fake__crash', arguments: {} }), { instanceOf: McpError });
  t.regex(crash.message, /MCP server "fake"/);
  const after = await mcp.callTool({ name: 'fake__echo', arguments: { n: 1 } });
  t.deepEqual(after.content, [{ type: 'text', text: '{"n":1}' }]);
  await mcp.close();
});

test.serial('an expired upstream session is re-opened without the client noticing', async (t) => {
  const mcp = await client();
  await mcp.callTool({ name: 'fake__echo', arguments: { n: 1 } });
  const before = fake.initializeCount;
  fake.forgetSessions();
  const result = await mcp.callTool({ name: 'fake__echo', arguments: { n: 2 } });
  t.deepEqual(result.content, [{ type: 'text', text: '{"n":2}' }]);
  t.is(fake.initializeCount, before + 1);
  await mcp.close();
});

test.serial('a client that goes away before its answer stops the tool call upstream', async (t) => {
  const mcp = await client();
  const sessionId = (mcp.transport as unknown as { sessionId: string }).sessionId;
  fake.slowMs = 5000;
  const before = fake.calls.length;
  const cancelledBefore = fake.notifications.filter((notification) => notification.method === 'notifications/cancelled').length;
  const controller = new AbortController();
  const pending = fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    signal: controller.signal,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
    body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'fake__slow', arguments: {} } }),
  });
  const deadline = Date.now() + 5000;
  while (fake.calls.length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  controller.abort();
  await t.throwsAsync(pending);
  while (fake.notifications.filter((notification) => notification.method === 'notifications/cancelled').length === cancelledBefore && Date.now() < deadline + 5000) await new Promise((resolve) => setTimeout(resolve, 10));
  t.is(fake.notifications.filter((notification) => notification.method === 'notifications/cancelled').length, cancelledBefore + 1);
  fake.slowMs = 2000;
  await mcp.close();
});


test.serial('changed tools: a re-registration (PUT) re-probes, makes a new version and lists the new tools', async (t) => {
  fake.tools = [{ name: 'echo' }, { name: 'fresh' }];
  const replaced = await admin(gateway, 'PUT', `/admin/mcp-servers/${serverId}`, { name: 'fake', transport: 'streamable-http', url: fake.url, timeout_ms: 500, max_result_bytes: 10_000 });
  t.is(replaced.status, 200);
  t.is(replaced.json.version, 2);
  t.deepEqual(replaced.json.tools.map((tool: { name: string }) => tool.name), ['echo', 'fresh']);
  const mcp = await client();
  t.deepEqual((await mcp.listTools()).tools.map((tool) => tool.name), ['fake__echo', 'fake__fresh']);
  const gone = await t.throwsAsync(mcp.callTool({ name: 'fake__slow', arguments: {} }), { instanceOf: McpError });
  t.is(gone.code, -32602);
  await mcp.close();
  const versions = await admin(gateway, 'GET', `/admin/mcp-servers/${serverId}/versions`);
  t.deepEqual(versions.json.data.map((version: { version: number }) => version.version), [1, 2]);
});

test.serial('an unreachable server is stored with its status, not refused; deleting a server removes its tools at once', async (t) => {
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'down', transport: 'sse', url: 'http://127.0.0.1:9/sse' });
  t.is(created.status, 201);
  t.is(created.json.status, 'unreachable');
  t.truthy(created.json.status_detail);
  t.deepEqual(created.json.tools, []);
  const mcp = await client();
  t.true((await mcp.listTools()).tools.length > 0);
  t.is((await admin(gateway, 'DELETE', `/admin/mcp-servers/${serverId}`)).status, 204);
  t.deepEqual((await mcp.listTools()).tools, []);
  t.is((await admin(gateway, 'GET', `/admin/mcp-servers/${serverId}`)).status, 404);
  await mcp.close();
});


test.serial('rate limits per key and tool, and a cost per call charged to the key budget', async (t) => {
  const limitedFake = await new FakeMcpServer().start();
  t.teardown(() => limitedFake.stop());
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'limited', transport: 'streamable-http', url: limitedFake.url, tool_requests_per_minute: 2, cost_per_call_usd: 0.25 });
  t.is(created.status, 201);
  const limitedKey = await createKey(t, gateway, { name: 'rate-limited', mcp: { servers: { limited: { tools: ['*'] } } } });
  const mcp = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${limitedKey.key}` });
  await mcp.callTool({ name: 'limited__echo', arguments: {} });
  await mcp.callTool({ name: 'limited__echo', arguments: {} });
  const limited = await t.throwsAsync(mcp.callTool({ name: 'limited__echo', arguments: {} }), { instanceOf: McpError });
  t.is(limited.code, -32000);
  t.regex(limited.message, /may call tool "echo" of MCP server "limited" 2 times a minute/);
  await mcp.callTool({ name: 'limited__fails', arguments: {} });
  t.is(limitedFake.calls.length, 3);
  await mcp.close();

  const budgeted = await createKey(t, gateway, { name: 'budgeted', limits: { budget_usd: 0.5 }, mcp: { servers: { limited: { tools: ['*'] } } } });
  const paid = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${budgeted.key}` });
  await paid.callTool({ name: 'limited__echo', arguments: {} });
  await paid.callTool({ name: 'limited__fails', arguments: {} });
  const spent = await t.throwsAsync(paid.callTool({ name: 'limited__big', arguments: {} }), { instanceOf: McpError });
  t.is(spent.code, -32000);
  t.regex(spent.message, /budget is spent/);
  await paid.close();
  const usage = await admin(gateway, 'GET', `/admin/virtual-keys/${budgeted.id}/usage`);
  t.is(usage.json.spend_usd.total, 0.5);
  const charged = gateway.entries().filter((entry) => entry.keyName === 'budgeted' && entry.mcp?.method === 'tools/call');
  t.deepEqual(charged.map((entry) => entry.costUsd ?? 0).sort(), [0, 0.25, 0.25]);
});


test.serial('wrong keys on /mcp are counted per client address like everywhere else (429 past the limit)', async (t) => {
  const statuses: number[] = [];
  let last: { error?: { code?: string } } = {};
  for (let attempt = 0; attempt < 30 && !statuses.includes(429); attempt++) {
    const response = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer vk-wrong-${attempt}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    statuses.push(response.status);
    last = (await response.json()) as typeof last;
  }
  t.is(statuses[0], 401);
  t.is(statuses.at(-1), 429);
  t.is(last.error?.code, 'too_many_failed_auth');
  // A valid key keeps working.
  const mcp = await client();
  t.true(Array.isArray((await mcp.listTools()).tools));
  await mcp.close();
});
