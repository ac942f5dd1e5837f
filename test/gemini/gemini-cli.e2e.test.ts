import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { openai } from '../../plugins/providers/openai/index.js';
import { type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway } from '../harness.js';

/**
 * Gemini CLI (`@google/gemini-cli`, pinned) configured with only a base URL and a key
 * (`GOOGLE_GEMINI_BASE_URL`, `GEMINI_API_KEY` = a virtual key bound to OpenAI with a loopback custom
 * host) runs a non-interactive prompt that makes it call its `read_file` tool, against a fake OpenAI
 * behind the gateway. Its home is a fresh folder whose settings turn off usage statistics, telemetry
 * and update checks, so nothing leaves loopback.
 */

const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const SECRET_LINE = 'The launch code is 4242.';

/** A fake OpenAI chat endpoint: a tool-bearing turn gets a `read_file` call, the turn after the tool result an answer quoting it. */
function agentFake(request: RecordedRequest, response: import('node:http').ServerResponse): void {
  const body = request.json();
  const last = body.messages.at(-1);
  const calls = Array.isArray(body.tools) && body.tools.some((tool: any) => tool.function?.name === 'read_file') && last?.role !== 'tool';
  const answer = last?.role === 'tool' ? `The notes say: ${String(last.content).includes(SECRET_LINE) ? SECRET_LINE : 'nothing'}` : '{}';
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'chatcmpl-cli', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const usage = { id: 'chatcmpl-cli', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 } };
  if (!body.stream) {
    const message = calls
      ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_read', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"notes.txt"}' } }] }
      : { role: 'assistant', content: answer };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'chatcmpl-cli', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: calls ? 'tool_calls' : 'stop' }], usage: usage.usage }));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  if (calls) {
    response.write(sse(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_read', type: 'function', function: { name: 'read_file', arguments: '{"file_' } }] })));
    response.write(sse(chunk({ tool_calls: [{ index: 0, function: { arguments: 'path":"notes.txt"}' } }] })));
    response.write(sse(chunk({}, 'tool_calls')));
  } else {
    response.write(sse(chunk({ role: 'assistant', content: answer })));
    response.write(sse(chunk({}, 'stop')));
  }
  response.write(sse(usage));
  response.end('data: [DONE]\n\n');
}

test('Gemini CLI with only a base URL and a virtual key runs a prompt that reads a file with its tool, through a fake OpenAI', async (t) => {
  const fake = await startFake(agentFake);
  // A loopback proxy that lets nothing through: any request (or CONNECT tunnel) the CLI tries beyond loopback lands here.
  const attempts: string[] = [];
  const trap = createServer((request, response) => {
    attempts.push(`${request.method} ${request.url}`);
    response.writeHead(502).end();
  });
  trap.on('connect', (request, socket) => {
    attempts.push(`CONNECT ${request.url}`);
    socket.destroy();
  });
  trap.listen(0, '127.0.0.1');
  await once(trap, 'listening');
  const trapOrigin = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
  const gateway = await startGateway({ providers: [openai()] });
  t.teardown(async () => {
    await gateway.close();
    await fake.close();
    trap.close();
  });
  const created = await fetch(`${gateway.url}/admin/virtual-keys`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'gemini cli', provider: 'openai', provider_key: PROVIDER_KEY, custom_host: fake.baseUrl }),
  });
  t.is(created.status, 201);
  const { key } = (await created.json()) as { key: string };

  const home = mkdtempSync(join(tmpdir(), 'gemini-cli-home-'));
  const workspace = mkdtempSync(join(tmpdir(), 'gemini-cli-work-'));
  writeFileSync(join(workspace, 'notes.txt'), `${SECRET_LINE}\n`);
  mkdirSync(join(home, '.gemini'));
  const settings = {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    security: { auth: { selectedType: 'gemini-api-key' } },
  };
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings));
  const environment = {
    PATH: process.env.PATH,
    HOME: home,
    GEMINI_CLI_HOME: home,
    GOOGLE_GEMINI_BASE_URL: gateway.url,
    GEMINI_API_KEY: key,
    GEMINI_CLI_NO_RELAUNCH: 'true',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    NO_COLOR: '1',
    HTTPS_PROXY: trapOrigin,
    HTTP_PROXY: trapOrigin,
    NO_PROXY: '127.0.0.1,localhost',
  };
  const cli = join(process.cwd(), 'node_modules/@google/gemini-cli/bundle/gemini.js');
  const result = await new Promise<{ failed: boolean; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [cli, '-p', 'What do the notes in notes.txt say?', '--model', 'gpt-4o'], { env: environment, cwd: workspace, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ failed: error !== null, stdout, stderr }),
    );
  });
  t.false(result.failed, result.stderr);
  t.regex(result.stdout, /The notes say: The launch code is 4242\./);
  // The tool ran in the CLI: its result (the file's line) came back to the provider as a tool message.
  const toolTurns = fake.requests.map((request) => request.json().messages.at(-1)).filter((message) => message?.role === 'tool');
  t.true(toolTurns.some((message) => String(message.content).includes(SECRET_LINE)));
  const entries = gateway.entries();
  t.true(entries.length >= 2);
  t.true(entries.every((entry) => entry.operation === 'generateContent' || entry.operation === 'geminiCountTokens'), JSON.stringify(entries.map((entry) => entry.operation)));
  t.true(entries.every((entry) => entry.status === 200));
  t.false(gateway.rawLog().includes(key));
  t.deepEqual(attempts, [], 'nothing beyond loopback');
  t.false(fake.requests.some((request) => JSON.stringify(request.headers).includes(key)));
});
