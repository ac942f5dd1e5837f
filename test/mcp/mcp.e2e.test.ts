import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import test from 'ava';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { mcpClient, memoryServerCommand, startEverything } from './mcp-harness.js';

let gateway: TestGateway;
let everything: { url: string; stop: () => Promise<void> };
let serverId: string;

test.before(async () => {
  everything = await startEverything();
  const memoryFile = join(mkdtempSync(join(tmpdir(), 'mcp-memory-')), 'memory.jsonl');
  gateway = await startGateway({ mcp: { servers: [{ name: 'memory', transport: 'stdio', ...memoryServerCommand(memoryFile) }] } });
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'everything', transport: 'streamable-http', url: everything.url });
  if (created.status !== 201) throw new Error(`registering server-everything: ${created.status} ${created.text}`);
  serverId = created.json.id;
});

test.after.always(async () => {
  await gateway?.close();
  await everything?.stop();
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

test('registering probes the server: its status and tools are recorded and shown', async (t) => {
  const shown = await admin(gateway, 'GET', `/admin/mcp-servers/${serverId}`);
  t.is(shown.status, 200);
  t.is(shown.json.name, 'everything');
  t.is(shown.json.status, 'ok');
  t.is(shown.json.version, 1);
  t.true(shown.json.tools.some((tool: { name: string }) => tool.name === 'echo'));
  const listed = await admin(gateway, 'GET', '/admin/mcp-servers');
  t.true(listed.json.data.some((server: { id: string; status: string }) => server.id === serverId && server.status === 'ok'));
});

test('the SDK client lists exactly the granted tools, prefixed, and calls one', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'mcp-echo', mcp: { servers: { everything: { tools: ['echo', 'get-*'], deny: ['get-env'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp`, bearer(key));
  const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
  t.true(names.includes('everything__echo'));
  t.true(names.includes('everything__get-sum'));
  t.false(names.includes('everything__get-env'));
  t.true(names.every((name) => name === 'everything__echo' || name.startsWith('everything__get-')));
  const result = await client.callTool({ name: 'everything__echo', arguments: { message: 'hello gateway' } });
  t.deepEqual(result.content, [{ type: 'text', text: 'Echo: hello gateway' }]);
  const sum = await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } });
  t.regex(JSON.stringify(sum.content), /5/);
  await client.close();
});

test('a denied tool answers exactly like a tool that does not exist (-32602)', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'mcp-deny', mcp: { servers: { everything: { tools: ['*'], deny: ['get-env'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp`, bearer(key));
  const denied = await t.throwsAsync(client.callTool({ name: 'everything__get-env', arguments: {} }), { instanceOf: McpError });
  const missing = await t.throwsAsync(client.callTool({ name: 'everything__no-such-tool', arguments: {} }), { instanceOf: McpError });
  const otherServer = await t.throwsAsync(client.callTool({ name: 'memory__read_graph', arguments: {} }), { instanceOf: McpError });
  t.is(denied.code, -32602);
  t.is(missing.code, -32602);
  t.is(otherServer.code, -32602);
  t.is(denied.message.replace('get-env', 'X'), missing.message.replace('no-such-tool', 'X'));
  await client.close();
});

test('/mcp/<server> serves one server under its own tool names', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'mcp-one', mcp: { servers: { '*': { tools: ['echo'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp/everything`, { 'x-gateway-api-key': key });
  t.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['echo']);
  const result = await client.callTool({ name: 'echo', arguments: { message: 'one' } });
  t.deepEqual(result.content, [{ type: 'text', text: 'Echo: one' }]);
  await client.close();
  const unknown = await fetch(`${gateway.url}/mcp/nowhere`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) });
  t.is(unknown.status, 404);
  t.is(((await unknown.json()) as any).error.code, 'mcp_server_not_found');
});

test('a stdio server from gateway.config.ts (server-memory) is started and its tools called', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'mcp-memory', mcp: { servers: { memory: { tools: ['*'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp`, bearer(key));
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  t.true(names.includes('memory__create_entities'));
  t.false(names.some((name) => name.startsWith('everything__')));
  await client.callTool({ name: 'memory__create_entities', arguments: { entities: [{ name: 'gateway', entityType: 'software', observations: ['serves MCP'] }] } });
  const graph = await client.callTool({ name: 'memory__read_graph', arguments: {} });
  t.regex(JSON.stringify(graph), /serves MCP/);
  await client.close();
});

test('no key is 401 with WWW-Authenticate; a key without an mcp grant, and the account key, are 403 mcp_not_granted at initialize', async (t) => {
  const initialize = (headers: Record<string, string>) =>
    fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
  const none = await initialize({});
  t.is(none.status, 401);
  t.regex(none.headers.get('www-authenticate') ?? '', /^Bearer /);
  const wrong = await initialize(bearer('vk-not-a-key'));
  t.is(wrong.status, 401);
  t.truthy(wrong.headers.get('www-authenticate'));
  const created = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'no-mcp', provider: 'openai', provider_key: 'sk-test-provider-key-123456' });
  const plain = await initialize(bearer(created.json.key));
  t.is(plain.status, 403);
  t.is(((await plain.json()) as any).error.code, 'mcp_not_granted');
  const account = await initialize(bearer(ACCOUNT_KEY));
  t.is(account.status, 403);
  t.is(((await account.json()) as any).error.code, 'mcp_not_granted');
});

test('an MCP-only key is refused on model calls (403 mcp_only_key)', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'mcp-only', mcp: { servers: { '*': { tools: ['*'] } } } });
  const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gateway-api-key': key }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
  t.is(response.status, 403);
  t.is(((await response.json()) as any).error.code, 'mcp_only_key');
});

test('every MCP request is a log entry (operation mcp, server, method, tool) and counted in /metrics', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'mcp-logged', mcp: { servers: { everything: { tools: ['echo'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp`, bearer(key));
  await client.callTool({ name: 'everything__echo', arguments: { message: 'logged call' } });
  await t.throwsAsync(client.callTool({ name: 'everything__get-env', arguments: {} }));
  await client.close();
  const deadline = Date.now() + 3000;
  const ofKey = () => gateway.entries().filter((entry) => entry.operation === 'mcp' && entry.keyName === 'mcp-logged');
  while (ofKey().filter((entry) => entry.mcp?.method === 'tools/call').length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  const calls = ofKey().filter((entry) => entry.mcp?.method === 'tools/call');
  const ok = calls.find((entry) => entry.outcome === 'ok');
  t.deepEqual(ok?.mcp, { method: 'tools/call', server: 'everything', tool: 'echo', session: ok?.mcp?.session });
  t.is(ok?.status, 200);
  const failed = calls.find((entry) => entry.outcome === 'error');
  t.is(failed?.status, 200);
  t.is(failed?.error?.code, '-32602');
  t.true(ofKey().some((entry) => entry.mcp?.method === 'initialize'));
  t.false(gateway.rawLog().includes(key));
  const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
  t.regex(metrics, /gateway_mcp_requests_total\{server="everything",method="tools\/call",tool="echo",outcome="ok"\} \d+/);
  t.regex(metrics, /gateway_mcp_tool_call_duration_seconds_count\{server="everything",tool="echo"\} \d+/);
});

test('GET /mcp without a session is 400; a request without a session is 400; an unknown session is 404', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'mcp-http', mcp: { servers: { '*': { tools: ['*'] } } } });
  t.is((await fetch(`${gateway.url}/mcp`, { headers: { ...bearer(key), accept: 'text/event-stream' } })).status, 400);
  t.is((await fetch(`${gateway.url}/mcp`, { headers: { ...bearer(key), accept: 'text/event-stream', 'mcp-session-id': 'nope' } })).status, 404);
  const post = (headers: Record<string, string>) =>
    fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(key), ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }) });
  t.is((await post({})).status, 400);
  t.is((await post({ 'mcp-session-id': 'no-such-session' })).status, 404);
});

test('stdio servers are refused by the admin API, and names and fields are checked', async (t) => {
  const stdio = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'local', transport: 'stdio', url: 'http://127.0.0.1:1' });
  t.is(stdio.status, 400);
  t.is(stdio.json.error.param, 'transport');
  const badName = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'a__b', transport: 'sse', url: 'http://127.0.0.1:1' });
  t.is(badName.json.error.param, 'name');
  const clash = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'memory', transport: 'sse', url: 'http://127.0.0.1:1' });
  t.is(clash.json.error.param, 'name');
  const duplicate = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'everything', transport: 'streamable-http', url: everything.url });
  t.is(duplicate.status, 409);
  const metadata = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'metadata', transport: 'sse', url: 'http://169.254.169.254/mcp' });
  t.is(metadata.status, 400);
  t.is(metadata.json.error.param, 'url');
  const grant = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'bad-grant', mcp: { servers: { everything: { tools: 'echo' } } } });
  t.is(grant.status, 400);
  t.is(grant.json.error.param, 'mcp.servers.everything.tools');
});

test('resources, resource templates, prompts and completion of server-everything, namespaced on /mcp', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'mcp-resources', mcp: { servers: { everything: { tools: ['echo'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp`, bearer(key));
  const resources = (await client.listResources()).resources;
  t.true(resources.length > 0);
  t.true(resources.every((resource) => resource.uri.startsWith('mcp://everything/demo://') && resource.name.startsWith('everything__')));
  const read = await client.readResource({ uri: resources[0].uri });
  t.is(read.contents[0].uri, resources[0].uri);
  const templates = (await client.listResourceTemplates()).resourceTemplates;
  const text = templates.find((template) => template.uriTemplate.includes('/dynamic/text/'));
  t.truthy(text);
  t.true(text!.uriTemplate.startsWith('mcp://everything/demo://resource/dynamic/text/{'));
  const dynamic = await client.readResource({ uri: text!.uriTemplate.replace(/\{[^}]+\}/, '1') });
  t.regex(JSON.stringify(dynamic.contents), /mcp:\/\/everything\/demo:\/\/resource\/dynamic\/text\/1/);
  const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
  t.true(prompts.includes('everything__simple-prompt'));
  const prompt = await client.getPrompt({ name: 'everything__simple-prompt' });
  t.true(prompt.messages.length > 0);
  const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'everything__completable-prompt' }, argument: { name: 'department', value: 'Eng' } });
  t.deepEqual(completion.completion.values, ['Engineering']);
  const missing = await t.throwsAsync(client.getPrompt({ name: 'memory__nothing' }), { instanceOf: McpError });
  t.is(missing.code, -32602);
  await client.close();
  // A key reaching no server sees no resource and no prompt.
  const other = await createKey(t, gateway, { name: 'mcp-memory-only', mcp: { servers: { memory: { tools: ['*'] } } } });
  const memoryClient = await mcpClient(`${gateway.url}/mcp`, bearer(other.key));
  t.false((await memoryClient.listPrompts()).prompts.some((entry) => entry.name.startsWith('everything__')));
  const refused = await t.throwsAsync(memoryClient.readResource({ uri: resources[0].uri }), { instanceOf: McpError });
  t.is(refused.code, -32602);
  await memoryClient.close();
});

test('progress notifications of a long tool call are relayed to the client with its own token', async (t) => {
  const { key } = await createKey(t, gateway, { name: 'mcp-progress', mcp: { servers: { everything: { tools: ['trigger-long-running-operation'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp`, bearer(key));
  const updates: Array<{ progress: number; total?: number }> = [];
  const result = await client.callTool({ name: 'everything__trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, { onprogress: (progress) => updates.push(progress) });
  t.deepEqual(updates.map((update) => [update.progress, update.total]), [[1, 3], [2, 3], [3, 3]]);
  t.regex(JSON.stringify(result.content), /completed/i);
  await client.close();
});

test('a client listening on the session stream is told when its lists change (a change of its grant)', async (t) => {
  const { id, key } = await createKey(t, gateway, { name: 'mcp-listening', mcp: { servers: { everything: { tools: ['echo'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp`, bearer(key));
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes += 1;
  });
  t.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['everything__echo']);
  // The SDK opens the stream after initialization; a grant change is told once the stream is open.
  const deadline = Date.now() + 5000;
  let patched = 0;
  while (changes === 0 && Date.now() < deadline) {
    await admin(gateway, 'PATCH', `/admin/virtual-keys/${id}`, { mcp: { servers: { everything: { tools: ['echo', 'get-sum'] } } } });
    patched += 1;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.true(changes > 0);
  t.true(patched >= 1);
  t.deepEqual((await client.listTools()).tools.map((tool) => tool.name).sort(), ['everything__echo', 'everything__get-sum']);
  await client.close();
});

test('a legacy SSE upstream (server-everything in sse mode) is registered, listed and called', async (t) => {
  const sse = await startEverything('sse');
  t.teardown(() => sse.stop());
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'legacy', transport: 'sse', url: sse.url });
  t.is(created.status, 201);
  t.is(created.json.status, 'ok');
  const { key } = await createKey(t, gateway, { name: 'mcp-legacy', mcp: { servers: { legacy: { tools: ['echo'] } } } });
  const client = await mcpClient(`${gateway.url}/mcp/legacy`, bearer(key));
  t.deepEqual((await client.listTools()).tools.map((tool) => tool.name), ['echo']);
  t.deepEqual((await client.callTool({ name: 'echo', arguments: { message: 'over sse' } })).content, [{ type: 'text', text: 'Echo: over sse' }]);
  await client.close();
  t.is((await admin(gateway, 'DELETE', `/admin/mcp-servers/${created.json.id}`)).status, 204);
});
