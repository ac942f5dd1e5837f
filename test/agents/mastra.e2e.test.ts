import { readFileSync } from 'node:fs';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import test from 'ava';
import { installLoopbackGuard } from '../fuzz/loopback-only.js';
import { assertAgentRan, FINAL_ANSWER, recordingFetches, setUpAgent } from './agent-harness.js';

/**
 * Mastra (`@mastra/core`, pinned) with only a base URL, a key and a model: an agent whose `model` is
 * `{ id: 'openai/gpt-4o', url, apiKey, api }` (the gateway's `/v1` and a virtual key). It reads a
 * file with its `readFile` tool and answers with what it found: `generate` over chat completions and
 * `stream` over the Responses API. Every `fetch` of this process is recorded for the run, so a
 * request meant for beyond loopback fails the test (`MASTRA_TELEMETRY_DISABLED` is set all the same).
 */

const PROMPT = 'What do the notes in notes.txt say?';
// The agent runs in this process: lookups and connects beyond loopback are refused and recorded.
const guard = installLoopbackGuard();

function notesAgent(url: string, apiKey: string, api: 'chat' | 'responses'): Agent {
  const readFile = createTool({
    id: 'readFile',
    description: 'Reads a text file and returns its content.',
    inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'The absolute path of the file.' } }, required: ['path'], additionalProperties: false },
    execute: async (input) => readFileSync((input as { path: string }).path, 'utf8'),
  });
  return new Agent({ id: 'notes-reader', name: 'Notes reader', instructions: 'Answer questions about files; read them with readFile.', model: { id: 'openai/gpt-4o', url: `${url}/v1`, apiKey, api }, tools: { readFile } });
}

test.before(() => {
  process.env.MASTRA_TELEMETRY_DISABLED = '1';
});

test.serial('a Mastra agent uses its tool over chat completions (generate), through the gateway with a virtual key', async (t) => {
  const setup = await setUpAgent(t, 'mastra', (notesPath) => ({ toolName: 'readFile', toolArguments: { path: notesPath } }));
  let text: string | undefined;
  const escapes = await recordingFetches(async () => {
    text = (await notesAgent(setup.url, setup.key, 'chat').generate(PROMPT)).text;
  });
  t.is(text, FINAL_ANSWER);
  t.deepEqual(escapes, [], 'nothing beyond loopback');
  t.deepEqual([...guard.refusedLookups, ...guard.refusedConnects], []);
  t.is(setup.fake.bodies().length, 2);
  t.true(setup.fake.requests.every((request) => request.url === '/v1/chat/completions'));
  t.deepEqual(setup.fake.bodies()[0].tools.map((declared: { function: { name: string } }) => declared.function.name), ['readFile']);
  await assertAgentRan(t, setup, ['chat']);
});

test.serial('a Mastra agent uses its tool over the Responses API (stream), through the gateway with a virtual key', async (t) => {
  const setup = await setUpAgent(t, 'mastra', (notesPath) => ({ toolName: 'readFile', toolArguments: { path: notesPath } }));
  let text: string | undefined;
  const escapes = await recordingFetches(async () => {
    const output = await notesAgent(setup.url, setup.key, 'responses').stream(PROMPT);
    text = await output.text;
  });
  t.is(text, FINAL_ANSWER);
  t.deepEqual(escapes, [], 'nothing beyond loopback');
  t.deepEqual([...guard.refusedLookups, ...guard.refusedConnects], []);
  t.is(setup.fake.bodies().length, 2);
  t.true(setup.fake.requests.every((request) => request.url === '/v1/responses'));
  t.true(setup.fake.bodies().every((body) => body.stream === true));
  await assertAgentRan(t, setup, ['responses']);
});
