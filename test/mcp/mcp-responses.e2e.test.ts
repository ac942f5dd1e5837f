import test from 'ava';
import OpenAI from 'openai';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type MessagesFake, startMessagesFake } from '../fakes/messages-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { FakeMcpServer } from './mcp-harness.js';

// The Responses API's `mcp` tool through a provider that has no such tool (Anthropic, translated to
// its Messages API): the gateway lists the granted tools, gives them to the model as functions, runs
// the model's calls on the MCP server under the key's grant and calls the model again.

let gateway: TestGateway;
let mcp: FakeMcpServer;
let model: MessagesFake;
let client: OpenAI;

const MODEL = 'claude-opus-4-7';
const toolUse = (input: Record<string, unknown>, name = 'fake__echo') => ({ content: [{ type: 'tool_use', id: 'toolu_01', name, input }], stopReason: 'tool_use' });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

test.before(async (t) => {
  mcp = await new FakeMcpServer().start();
  model = await startMessagesFake('sse');
  gateway = await startGateway({ providers: [openai(), anthropic()], pricing: { models: { anthropic: { [MODEL]: { input: 5, output: 25 } } } } });
  const created = await admin(gateway, 'POST', '/admin/mcp-servers', { name: 'fake', transport: 'streamable-http', url: mcp.url });
  if (created.status !== 201) throw new Error(created.text);
  // Granted echo and fails; the server's other tools (slow, big, …) are outside the grant.
  const { key } = await createKey(t, gateway, { name: 'agent', provider: 'anthropic', provider_key: 'sk-ant-stored-0123456789', custom_host: model.baseUrl, mcp: { servers: { fake: { tools: ['echo', 'fails'] } } } });
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});

test.after.always(async () => {
  await gateway?.close();
  await mcp?.stop();
  await model?.close();
});

const mcpTool = (extra: Record<string, unknown> = {}) => ({ type: 'mcp' as const, server_label: 'fake', require_approval: 'never' as const, ...extra });

/** The tool names the model was offered in its request `index`. */
const offered = (index: number): string[] => (model.body(index).tools ?? []).map((tool: { name: string }) => tool.name);

const settled = async (predicate: () => boolean) => {
  const deadline = Date.now() + 3000;
  while (!predicate() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
};

test.serial('plain: the model calls a granted tool, the gateway runs it and calls the model again; items as OpenAI documents them', async (t) => {
  const before = model.requests.length;
  const calls = mcp.calls.length;
  model.answer(toolUse({ note: 'hello' }), text('The echo said hello.'));
  const response = await client.responses.create({ model: MODEL, input: 'Echo hello', tools: [mcpTool({ allowed_tools: ['echo', 'slow'] })] });

  t.deepEqual(
    response.output.map((item) => item.type),
    ['mcp_list_tools', 'mcp_call', 'message'],
  );
  const [list, call] = response.output as any[];
  t.like(list, { type: 'mcp_list_tools', server_label: 'fake' });
  // In the grant and in allowed_tools: echo only (slow is outside the grant, fails outside allowed_tools).
  t.deepEqual(list.tools.map((tool: { name: string }) => tool.name), ['echo']);
  t.like(call, { type: 'mcp_call', server_label: 'fake', name: 'echo', arguments: '{"note":"hello"}', output: '{"note":"hello"}', status: 'completed', error: null });
  t.regex(call.id, /^mcp_/);
  t.is(response.output_text, 'The echo said hello.');
  t.is(response.status, 'completed');
  t.true(response.usage!.input_tokens > 0);

  t.is(model.requests.length, before + 2);
  t.deepEqual(offered(before), ['fake__echo']);
  const second = JSON.stringify(model.body(before + 1).messages);
  t.true(second.includes('"tool_result"') && second.includes('{\\"note\\":\\"hello\\"}'), 'the tool result is fed back to the model');
  t.deepEqual(mcp.calls.slice(calls).map((entry) => [entry.name, entry.arguments]), [['echo', { note: 'hello' }]]);

  // Each model call and the tool call are logged under the client request's trace id.
  const traced = () => gateway.entries().filter((entry) => entry.traceId === gateway.entries().find((candidate) => candidate.operation === 'mcp' && candidate.mcp?.method === 'tools/call')?.traceId);
  await settled(() => traced().length >= 4);
  const entries = traced();
  t.true(entries.filter((entry) => entry.operation === 'responses' && entry.provider === 'anthropic' && (entry.costUsd ?? 0) > 0).length >= 2, 'both model calls are logged and charged');
  t.truthy(entries.find((entry) => entry.operation === 'mcp' && entry.mcp?.method === 'tools/list' && entry.mcp?.server === 'fake'));
  t.truthy(entries.find((entry) => entry.operation === 'mcp' && entry.mcp?.tool === 'echo'));
});

test.serial('streamed: the mcp_list_tools and mcp_call events, the text relayed, the final response', async (t) => {
  model.answer(toolUse({ note: 'streamed' }), text('Done streaming.'));
  const stream = await client.responses.create({ model: MODEL, input: 'Echo streamed', stream: true, tools: [mcpTool()] });
  const types: string[] = [];
  const indexes: number[] = [];
  let deltas = '';
  let final: any;
  for await (const event of stream) {
    types.push(event.type);
    if ('sequence_number' in event) indexes.push(event.sequence_number);
    if (event.type === 'response.output_text.delta') deltas += event.delta;
    if (event.type === 'response.completed') final = event.response;
  }
  for (const expected of [
    'response.created',
    'response.mcp_list_tools.in_progress',
    'response.mcp_list_tools.completed',
    'response.mcp_call_arguments.delta',
    'response.mcp_call_arguments.done',
    'response.mcp_call.in_progress',
    'response.mcp_call.completed',
    'response.output_text.delta',
    'response.completed',
  ]) {
    t.true(types.includes(expected), expected);
  }
  t.true(types.indexOf('response.mcp_call.completed') < types.indexOf('response.output_text.delta'));
  t.deepEqual(indexes, [...indexes.keys()], 'events numbered from 0 without gaps');
  t.false(types.includes('response.function_call_arguments.delta'), 'the MCP call is not shown as a function call');
  t.is(deltas, 'Done streaming.');
  t.deepEqual(
    final.output.map((item: { type: string }) => item.type),
    ['mcp_list_tools', 'mcp_call', 'message'],
  );
  t.is(final.output[1].output, '{"note":"streamed"}');
});

test.serial('a tool outside the grant or allowed_tools is neither offered nor run when the model names it', async (t) => {
  const before = model.requests.length;
  const calls = mcp.calls.length;
  model.answer(toolUse({}, 'fake__slow'));
  const response = await client.responses.create({ model: MODEL, input: 'Be slow', tools: [mcpTool()] });
  t.deepEqual(offered(before).sort(), ['fake__echo', 'fake__fails']);
  // Not an MCP tool of the request: the call goes back to the client as a function call, and nothing runs.
  t.deepEqual(
    response.output.map((item) => item.type),
    ['mcp_list_tools', 'function_call'],
  );
  t.is(mcp.calls.length, calls);
  t.is(model.requests.length, before + 1);
});

test.serial("a server the key may not reach is refused like one that does not exist", async (t) => {
  const error = await t.throwsAsync(client.responses.create({ model: MODEL, input: 'x', tools: [{ type: 'mcp', server_label: 'nowhere', require_approval: 'never' }] }));
  t.is((error as any).status, 404);
  t.like((error as any).error, { code: 'mcp_server_not_found', param: 'tools[0].server_label' });
});

test.serial('approval: the response ends with an mcp_approval_request; an approving answer runs the call and continues', async (t) => {
  const calls = mcp.calls.length;
  model.answer(toolUse({ note: 'approve me' }));
  const asked = await client.responses.create({ model: MODEL, input: 'Echo with approval', tools: [mcpTool({ require_approval: 'always' })] });
  t.deepEqual(
    asked.output.map((item) => item.type),
    ['mcp_list_tools', 'mcp_approval_request'],
  );
  const request = asked.output[1] as any;
  t.like(request, { server_label: 'fake', name: 'echo', arguments: '{"note":"approve me"}' });
  t.is(mcp.calls.length, calls, 'nothing runs before approval');

  const before = model.requests.length;
  model.answer(text('Approved and echoed.'));
  const answered = await client.responses.create({
    model: MODEL,
    previous_response_id: asked.id,
    input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
    tools: [mcpTool({ require_approval: 'always' })],
  });
  t.deepEqual(
    answered.output.map((item) => item.type),
    ['mcp_call', 'message'],
    'the tools were listed in the conversation already',
  );
  t.like(answered.output[0] as any, { name: 'echo', approval_request_id: request.id, output: '{"note":"approve me"}', status: 'completed' });
  t.deepEqual(mcp.calls.slice(calls).map((entry) => entry.arguments), [{ note: 'approve me' }]);
  t.is(answered.output_text, 'Approved and echoed.');
  const fed = JSON.stringify(model.body(before).messages);
  t.true(fed.includes('tool_use') && fed.includes('approve me') && fed.includes('tool_result'));
});

test.serial('approval refused: nothing runs and the model is told', async (t) => {
  const calls = mcp.calls.length;
  model.answer(toolUse({ note: 'refuse me' }));
  const asked = await client.responses.create({ model: MODEL, input: 'Echo, refused', tools: [mcpTool({ require_approval: 'always' })] });
  const request = asked.output.find((item) => item.type === 'mcp_approval_request') as any;
  const before = model.requests.length;
  model.answer(text('Understood, not echoing.'));
  const answered = await client.responses.create({
    model: MODEL,
    previous_response_id: asked.id,
    input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false }],
    tools: [mcpTool({ require_approval: 'always' })],
  });
  t.deepEqual(
    answered.output.map((item) => item.type),
    ['message'],
  );
  t.is(mcp.calls.length, calls);
  t.true(JSON.stringify(model.body(before).messages).includes('did not approve'));
});

test.serial('a failing tool is an mcp_call with its error, and the model still answers', async (t) => {
  model.answer(toolUse({}, 'fake__fails'), text('The tool failed.'));
  const response = await client.responses.create({ model: MODEL, input: 'Fail', tools: [mcpTool()] });
  const call = response.output.find((item) => item.type === 'mcp_call') as any;
  t.like(call, { name: 'fails', status: 'failed', output: 'the tool failed' });
  t.like(call.error, { type: 'mcp_tool_execution_error' });
  t.is(response.output_text, 'The tool failed.');
});
