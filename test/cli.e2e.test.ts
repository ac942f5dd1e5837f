import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { PROVIDER_KEY } from './harness.js';

/** `node dist/core/main.js start`, as `npm start` runs it, with its output collected. */
function startCli(environment: Record<string, string>): { child: ChildProcess; output: () => string; ready: Promise<string> } {
  const child = spawn(process.execPath, ['dist/core/main.js', 'start'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /gateway listening on (http:\/\/\S+)/.exec(output);
      if (match && output.includes('providers:')) setTimeout(() => resolve(match[1]), 50);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
  return { child, output: () => output, ready };
}

let fake: Fake;
test.before(async () => {
  // A stream of 10 chunks, 60 ms apart.
  fake = await startFake(async (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let index = 0; index < 10; index++) {
      response.write(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${index} "},"finish_reason":null}]}\n\n`);
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    response.end('data: [DONE]\n\n');
  });
});
test.after.always(async () => {
  await fake?.close();
});

test.serial('first start generates and prints the account key once; SIGTERM lets a stream in flight finish', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-cli-'));
  const first = startCli({ GATEWAY_DATA_DIR: dataDir });
  const url = await first.ready;
  const key = /\n {2}(gw-\S+)\n/.exec(first.output())?.[1];
  t.truthy(key, first.output());
  t.is((await fetch(`${url}/admin/plugins`, { headers: { 'x-gateway-api-key': key! } })).status, 200);

  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': key!,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': fake.baseUrl,
      authorization: `Bearer ${PROVIDER_KEY}`,
    },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'count' }], stream: true }),
  });
  t.is(response.status, 200);
  const exited = once(first.child, 'exit');
  first.child.kill('SIGTERM');
  const text = await response.text();
  t.true(text.endsWith('data: [DONE]\n\n'), 'the stream in flight completed');
  t.true(text.includes('"9 "'));
  const [code] = await exited;
  t.is(code, 0);
  t.regex(first.output(), /shutting down/);

  const second = startCli({ GATEWAY_DATA_DIR: dataDir });
  const secondUrl = await second.ready;
  t.false(second.output().includes('account API key was generated'), 'the key is printed only on the first start');
  t.is((await fetch(`${secondUrl}/admin/plugins`, { headers: { 'x-gateway-api-key': key! } })).status, 200);
  second.child.kill('SIGTERM');
  await once(second.child, 'exit');
});
