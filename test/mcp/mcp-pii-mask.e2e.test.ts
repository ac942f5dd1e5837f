import test from 'ava';
import { pii } from '../../plugins/guardrails/index.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { FakeMcpServer, mcpClient } from './mcp-harness.js';

// Issue 37 on MCP tool calls, through the official MCP SDK client: a key whose policy masks PII sends
// the tool placeholders instead of the values in its arguments (input), and gets the values back in
// the tool's result (output), text and structured content alike; a placeholder the tool invents is
// not restored; the log holds neither the values nor the mapping.

const EMAIL = 'ana.lopez@example.com';
const PHONE = '+44 20 7946 0958';

let gateway: TestGateway;
let fake: FakeMcpServer;
let key: string;

test.before(async (t) => {
  fake = await new FakeMcpServer().start();
  gateway = await startGateway({ policies: { masked: { input: [pii({ action: 'mask' })] } } });
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'fake', transport: 'streamable-http', url: fake.url });
  if (created.status !== 201) throw new Error(created.text);
  ({ key } = await createKey(t, gateway, { name: 'masked', guardrail_policy: 'masked', mcp: { servers: { fake: { tools: ['echo'] } } } }));
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.stop();
});

test.serial('tool arguments are masked for the tool and restored in its result; an invented placeholder stays as written', async (t) => {
  const client = await mcpClient(`${gateway.url}/mcp`, { authorization: `Bearer ${key}` });
  const args = { to: EMAIL, note: `call ${PHONE} or write to ${EMAIL}`, cc: ['<EMAIL_7>'] };
  const result = await client.callTool({ name: 'fake__echo', arguments: args });
  await client.close();
  t.falsy(result.isError);
  // The tool saw placeholders only, the same value the same placeholder.
  const sent = fake.calls.at(-1)!.arguments as Record<string, unknown>;
  t.deepEqual(sent, { to: '<EMAIL_1>', note: 'call <PHONE_1> or write to <EMAIL_1>', cc: ['<EMAIL_7>'] });
  // The echo tool returns the arguments it got as JSON text: the client reads its own values back.
  const text = (result.content as Array<{ type: string; text: string }>)[0].text;
  t.deepEqual(JSON.parse(text), args);
  await gateway.gateway.flushLogs();
  const entry = gateway.entries().find((logged) => logged.operation === 'mcp' && logged.mcp?.method === 'tools/call');
  t.deepEqual(entry?.guardrails.map((verdict: { side: string; action: string }) => [verdict.side, verdict.action]), [['input', 'transform']]);
  const listed = await admin(gateway, 'GET', '/admin/logs?limit=50');
  const details = await Promise.all((listed.json.data as Array<{ id: string }>).map((row) => admin(gateway, 'GET', `/admin/logs/${row.id}`)));
  for (const detail of details) t.false(detail.text.includes(EMAIL) || detail.text.includes(PHONE), 'a value in the log');
});
