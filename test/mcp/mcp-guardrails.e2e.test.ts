import test from 'ava';
import { regex } from '../../plugins/guardrails/regex/index.js';
import { urlAllowlist } from '../../plugins/guardrails/url-allowlist/index.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { FakeMcpServer, mcpClient } from './mcp-harness.js';

// Guardrails on tools: the key's policy judges a call's arguments (input) and its result (output),
// the server's own policy after it; a denial is a result with isError, logged with its verdict.

let gateway: TestGateway;
let fake: FakeMcpServer;
let key: string;

test.before(async (t) => {
  fake = await new FakeMcpServer().start();
  gateway = await startGateway({
    policies: {
      tools: { input: [urlAllowlist({ hosts: ['example.com'] })], output: [regex({ pattern: '\\d{3}-\\d{2}-\\d{4}', mode: 'redact', label: 'ssn' })], revealReasons: true },
      'server-sql': { input: [regex({ pattern: 'DROP TABLE', mode: 'deny', label: 'sql' })] },
    },
  });
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'fake', transport: 'streamable-http', url: fake.url, guardrail_policy: 'server-sql' });
  if (created.status !== 201) throw new Error(created.text);
  ({ key } = await createKey(t, gateway, { name: 'guarded', guardrail_policy: 'tools', mcp: { servers: { fake: { tools: ['echo'] } } } }));
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.stop();
});

const entriesOf = async (count: number) => {
  const deadline = Date.now() + 3000;
  const calls = () => gateway.entries().filter((entry) => entry.operation === 'mcp' && entry.mcp?.method === 'tools/call');
  while (calls().length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  return calls();
};

test.serial('output: the key policy redacts what a tool returns', async (t) => {
  const client = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${key}` });
  const result = await client.callTool({ name: 'fake__echo', arguments: { note: 'ssn 123-45-6789 on file' } });
  t.falsy(result.isError);
  t.deepEqual(result.content, [{ type: 'text', text: '{"note":"ssn [REDACTED] on file"}' }]);
  await client.close();
  const [entry] = await entriesOf(1);
  t.deepEqual(entry.guardrails.map((verdict) => [verdict.policy, verdict.side, verdict.action]), [['tools', 'input', 'allow'], ['server-sql', 'input', 'allow'], ['tools', 'output', 'transform']]);
  t.deepEqual(entry.guardrails[2].changes, { ssn: 1 });
  t.is(entry.guardrailPolicy, 'tools');
});

test.serial('input: a URL outside the allow list is denied as an isError result, and the tool is never called', async (t) => {
  const calls = fake.calls.length;
  const client = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${key}` });
  const result = await client.callTool({ name: 'fake__echo', arguments: { url: 'https://evil.test/steal' } });
  t.true(result.isError);
  t.regex((result.content as Array<{ text: string }>)[0].text, /refused by the gateway's content policy: text links to a host that is not allowed/);
  t.is(fake.calls.length, calls);
  const allowed = await client.callTool({ name: 'fake__echo', arguments: { url: 'https://example.com/page' } });
  t.falsy(allowed.isError);
  t.is(fake.calls.length, calls + 1);
  await client.close();
  const denied = (await entriesOf(3)).find((entry) => entry.guardrails.some((verdict) => verdict.action === 'deny'));
  t.is(denied?.outcome, 'ok');
  t.is(denied?.guardrails.find((verdict) => verdict.action === 'deny')?.policy, 'tools');
});

test.serial("input: the server's own policy applies after the key's (without revealing its reason)", async (t) => {
  const calls = fake.calls.length;
  const client = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${key}` });
  const result = await client.callTool({ name: 'fake__echo', arguments: { query: 'DROP TABLE users' } });
  t.true(result.isError);
  t.is((result.content as Array<{ text: string }>)[0].text, "The tool call was refused by the gateway's content policy.");
  t.is(fake.calls.length, calls);
  await client.close();
});

test.serial('the durable request log keeps MCP calls searchable by tool, with bodies redacted and flagged values masked', async (t) => {
  const client = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${key}` });
  await client.callTool({ name: 'fake__echo', arguments: { note: 'call 987-65-4321 now' } });
  await client.close();
  await gateway.gateway.flushLogs();
  const listed = await admin(gateway, 'GET', '/admin/logs?metadata_key=mcp.tool&metadata_value=echo&limit=50');
  t.is(listed.status, 200);
  const rows = listed.json.data as Array<{ id: string; operation: string; metadata: Record<string, string> }>;
  t.true(rows.length >= 1);
  t.true(rows.every((row) => row.operation === 'mcp' && row.metadata['mcp.server'] === 'fake'));
  const details = await Promise.all(rows.map((row) => admin(gateway, 'GET', `/admin/logs/${row.id}`)));
  const mine = details.find((detail) => (detail.json.request_body ?? '').includes('now'));
  t.truthy(mine);
  t.false(mine!.text.includes('987-65-4321'));
  t.regex(mine!.json.request_body, /FLAGGED|REDACTED/);
  t.false(mine!.text.includes(key));
});
