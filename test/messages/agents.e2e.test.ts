import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { openaiFake } from '../../plugins/providers/openai/openai-fake.js';
import { checkMessagesStream } from '../fakes/messages-stream.js';
import { startMessagesFake } from '../fakes/messages-fake.js';
import { startRenderedFake } from '../fakes/rendered-fake.js';
import { ACCOUNT_KEY, loggedOnce, startGateway, type TestGateway, traceId } from '../harness.js';
import { postMessages } from './helpers.js';

/**
 * A request shaped as coding agents send it (`__fixtures__/agent-request.json`: assembled from the
 * Anthropic SDK's request types and Anthropic's documentation, not captured from traffic): cached
 * system blocks, a `system` entry in `messages`, signed thinking in the history, tool results,
 * custom and server tools, adaptive thinking, `output_config`, `context_management`, and the headers
 * and query string such clients add. It must work out of the box on both paths.
 */

const agentRequest = readFileSync(join(process.cwd(), 'test/messages/__fixtures__/agent-request.json'), 'utf8');
const AGENT_HEADERS = {
  'anthropic-version': '2023-06-01',
  'anthropic-beta': 'interleaved-thinking-2025-05-14,context-management-2025-06-27,fine-grained-tool-streaming-2025-05-14',
  'x-app': 'cli',
  'anthropic-dangerous-direct-browser-access': 'true',
};

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [openai(), anthropic()] });
});
test.after.always(() => gateway.close());

test('natively on Anthropic the agent request goes up byte for byte, with its beta headers', async (t) => {
  const fake = await startMessagesFake('sse');
  t.teardown(() => fake.close());
  fake.answer({ content: [{ type: 'text', text: 'The test expects 2.' }] });
  const response = await postMessages(gateway.url, agentRequest, { ...AGENT_HEADERS, 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': fake.baseUrl }, '/v1/messages?beta=true');
  const checked = checkMessagesStream(await response.text());
  t.deepEqual(checked.message.content, [{ type: 'text', text: 'The test expects 2.' }]);
  t.is(fake.requests[0].body.toString('utf8'), agentRequest);
  t.is(fake.requests[0].url, '/v1/messages');
  t.is(fake.requests[0].headers['anthropic-beta'], AGENT_HEADERS['anthropic-beta']);
  t.is(fake.requests[0].headers['anthropic-version'], '2023-06-01');
});

test('translated to OpenAI the agent request works; every field it could not send is listed', async (t) => {
  const fake = await startRenderedFake(openaiFake);
  t.teardown(() => fake.close());
  fake.answer({ kind: 'toolCall', id: 'call_7', name: 'Bash', arguments: '{"command":"npx ava parser.test.ts"}', usage: { promptTokens: 300, completionTokens: 20 } });
  const id = traceId('messages-agent');
  const response = await postMessages(
    gateway.url,
    agentRequest,
    { ...AGENT_HEADERS, 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl, 'x-gateway-trace-id': id },
    '/v1/messages?beta=true',
  );
  t.is(response.status, 200);
  const checked = checkMessagesStream(await response.text());
  t.deepEqual(checked.message.content, [{ type: 'tool_use', id: 'call_7', name: 'Bash', input: { command: 'npx ava parser.test.ts' } }]);
  t.is(checked.message.stop_reason, 'tool_use');

  const sent = fake.body(0);
  t.deepEqual(
    sent.messages.map((message: { role: string }) => message.role),
    ['system', 'system', 'user', 'assistant', 'tool'],
  );
  t.is(sent.messages[0].content, 'You are an interactive coding agent that helps users with software engineering tasks.\nWorking directory: /home/dev/project. Platform: linux. Use the tools to read and edit files.');
  t.deepEqual(sent.messages[3], { role: 'assistant', content: 'Let me read the test.', tool_calls: [{ id: 'toolu_01A', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/home/dev/project/parser.test.ts"}' } }] });
  t.deepEqual(
    sent.tools.map((tool: { function: { name: string } }) => tool.function.name),
    ['Read', 'Bash'],
  );
  t.like(sent, { model: 'claude-opus-4-7', max_tokens: 32000, stream: true, temperature: 1, tool_choice: 'auto', user: 'user_2f7c_account_91ab_session_5d3e' });
  for (const field of ['thinking', 'output_config', 'context_management', 'metadata', 'system']) t.false(field in sent, field);
  t.is(fake.requests[0].headers['anthropic-beta'], undefined);

  const entry = await loggedOnce(gateway, id);
  t.deepEqual([...(entry.droppedFields ?? [])].sort(), ['cache_control', 'content.thinking', 'context_management', 'output_config.effort', 'thinking', 'tools.web_search_20250305']);
});
