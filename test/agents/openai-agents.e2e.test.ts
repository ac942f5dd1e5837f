import { readFileSync } from 'node:fs';
import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents';
import test, { type ExecutionContext } from 'ava';
import { groq } from '../../plugins/providers/groq/index.js';
import { installLoopbackGuard } from '../fuzz/loopback-only.js';
import { type AgentSetup, assertAgentRan, FINAL_ANSWER, recordingFetches, setUpAgent } from './agent-harness.js';

/**
 * The OpenAI Agents SDK (`@openai/agents`, pinned) with only a base URL and a key: an
 * `OpenAIProvider({ baseURL, apiKey, useResponses })` (the gateway's `/v1` and a virtual key) as the
 * runner's model provider, tracing off (it would export spans to OpenAI;
 * `OPENAI_AGENTS_DISABLE_TRACING=1` does the same). A tool-using agent reads a
 * file with its `read_file` function tool and answers with what it found; over the Responses API and
 * over chat completions, streamed and not; and over the Responses API on a provider with chat only
 * (Groq), where the gateway translates each turn to chat and back. Every `fetch` of this process is recorded for the run, so
 * a request meant for beyond loopback (a trace export, say) fails the test.
 */

const PROMPT = 'What do the notes in notes.txt say?';
// The agent runs in this process: lookups and connects beyond loopback are refused and recorded.
const guard = installLoopbackGuard();

function readNotesAgent(): Agent {
  const readFile = tool({
    name: 'read_file',
    description: 'Reads a text file and returns its content.',
    parameters: { type: 'object', properties: { path: { type: 'string', description: 'The absolute path of the file.' } }, required: ['path'], additionalProperties: false },
    strict: true,
    execute: async (input) => readFileSync((input as { path: string }).path, 'utf8'),
  });
  return new Agent({ name: 'Notes reader', instructions: 'Answer questions about files; read them with read_file.', model: 'gpt-4o', tools: [readFile] });
}

async function runAgent(t: ExecutionContext, setup: AgentSetup, useResponses: boolean, stream: boolean): Promise<string | undefined> {
  const runner = new Runner({ modelProvider: new OpenAIProvider({ baseURL: `${setup.url}/v1`, apiKey: setup.key, useResponses }), tracingDisabled: true });
  const agent = readNotesAgent();
  let output: string | undefined;
  const escapes = await recordingFetches(async () => {
    if (stream) {
      const result = await runner.run(agent, PROMPT, { stream: true });
      await result.completed;
      output = result.finalOutput as string | undefined;
    } else {
      output = (await runner.run(agent, PROMPT)).finalOutput as string | undefined;
    }
  });
  t.deepEqual(escapes, [], 'nothing beyond loopback');
  t.deepEqual([...guard.refusedLookups, ...guard.refusedConnects], []);
  return output;
}

for (const stream of [false, true]) {
  const streamed = stream ? 'streamed' : 'not streamed';
  test.serial(`an Agents SDK agent uses its tool over the Responses API (${streamed}), through the gateway with a virtual key`, async (t) => {
    const setup = await setUpAgent(t, 'openai-agents', (notesPath) => ({ toolName: 'read_file', toolArguments: { path: notesPath } }));
    t.is(await runAgent(t, setup, true, stream), FINAL_ANSWER);
    const bodies = setup.fake.bodies();
    t.is(bodies.length, 2);
    t.true(setup.fake.requests.every((request) => request.url === '/v1/responses'));
    t.true(bodies.every((body) => body.model === 'gpt-4o' && Boolean(body.stream) === stream));
    t.deepEqual(bodies[0].tools.map((declared: { name: string }) => declared.name), ['read_file']);
    await assertAgentRan(t, setup, ['responses']);
  });

  test.serial(`an Agents SDK agent uses its tool over chat completions (${streamed}), through the gateway with a virtual key`, async (t) => {
    const setup = await setUpAgent(t, 'openai-agents', (notesPath) => ({ toolName: 'read_file', toolArguments: { path: notesPath } }));
    t.is(await runAgent(t, setup, false, stream), FINAL_ANSWER);
    const bodies = setup.fake.bodies();
    t.is(bodies.length, 2);
    t.true(setup.fake.requests.every((request) => request.url === '/v1/chat/completions'));
    t.true(bodies.every((body) => body.model === 'gpt-4o' && Boolean(body.stream) === stream));
    t.deepEqual(bodies[0].tools.map((declared: { function: { name: string } }) => declared.function.name), ['read_file']);
    await assertAgentRan(t, setup, ['chat']);
  });
}

test.serial('an Agents SDK agent uses its tool over the Responses API on a provider with chat only (translated), through the gateway', async (t) => {
  const setup = await setUpAgent(t, 'openai-agents', (notesPath) => ({ toolName: 'read_file', toolArguments: { path: notesPath } }), { provider: 'groq', registrations: [groq()] });
  t.is(await runAgent(t, setup, true, true), FINAL_ANSWER);
  const bodies = setup.fake.bodies();
  t.is(bodies.length, 2);
  t.true(setup.fake.requests.every((request) => request.url === '/v1/chat/completions'));
  t.deepEqual(bodies[0].tools.map((declared: { function: { name: string } }) => declared.function.name), ['read_file']);
  t.deepEqual(bodies[1].messages.at(-2).tool_calls.map((call: { function: { name: string } }) => call.function.name), ['read_file']);
  await assertAgentRan(t, setup, ['responses']);
});
