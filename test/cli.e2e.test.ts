import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
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

/** Runs one CLI command (`node dist/core/main.js …`) to its end. */
async function runCli(args: string[], environment: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['dist/core/main.js', ...args], { env: { PATH: process.env.PATH ?? '', ...environment }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'close', not 'exit': the output may still be in the pipe when the process has exited.
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

const shownKey = (output: string): string | undefined => /\n {2}(gw-\S+)\n/.exec(output)?.[1];

async function stopCli(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

const adminStatus = async (url: string, key: string): Promise<number> => (await fetch(`${url}/admin/plugins`, { headers: { 'x-gateway-api-key': key } })).status;

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

test.serial('a start that fails (port in use) stores no account key; the next start prints one that works', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-cli-'));
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  const failed = startCli({ GATEWAY_DATA_DIR: dataDir, PORT: String(port) });
  failed.ready.catch(() => {});
  const [code] = await once(failed.child, 'exit');
  await new Promise<void>((resolve) => blocker.close(() => resolve()));
  t.is(code, 1);
  t.regex(failed.output(), /gateway failed to start/);
  t.is(shownKey(failed.output()), undefined, 'no key was shown');
  t.false(existsSync(join(dataDir, 'account-key.json')), 'so none was stored');

  const next = startCli({ GATEWAY_DATA_DIR: dataDir });
  const url = await next.ready;
  try {
    const key = shownKey(next.output());
    t.truthy(key, next.output());
    t.is(await adminStatus(url, key!), 200);
  } finally {
    await stopCli(next.child);
  }
});

test.serial('reset-account-key prints a new key once and stores its hash; refused while GATEWAY_API_KEY is set', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-cli-'));
  const first = startCli({ GATEWAY_DATA_DIR: dataDir });
  await first.ready;
  const lost = shownKey(first.output())!;
  await stopCli(first.child);

  const reset = await runCli(['reset-account-key'], { GATEWAY_DATA_DIR: dataDir });
  t.is(reset.code, 0, reset.stderr);
  const key = shownKey(reset.stdout);
  t.truthy(key, reset.stdout);
  t.not(key, lost);
  t.false(readFileSync(join(dataDir, 'account-key.json'), 'utf8').includes(key!), 'only the hash is stored');

  const next = startCli({ GATEWAY_DATA_DIR: dataDir });
  const url = await next.ready;
  try {
    t.is(shownKey(next.output()), undefined, 'the start prints no key: the reset one is in force');
    t.is(await adminStatus(url, key!), 200);
    t.is(await adminStatus(url, lost), 401);
  } finally {
    await stopCli(next.child);
  }

  const stored = readFileSync(join(dataDir, 'account-key.json'), 'utf8');
  const refused = await runCli(['reset-account-key'], { GATEWAY_DATA_DIR: dataDir, GATEWAY_API_KEY: 'gw-configured-account-key-0123456789' });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /GATEWAY_API_KEY is set/);
  t.is(shownKey(refused.stdout), undefined);
  t.is(readFileSync(join(dataDir, 'account-key.json'), 'utf8'), stored, 'nothing changed');
});

test.serial('an account key shorter than 24 characters is refused at boot, without echoing it', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-cli-'));
  const short = startCli({ GATEWAY_DATA_DIR: dataDir, GATEWAY_API_KEY: 'gw-too-short-key-1234' });
  // `ready` settles either way: it resolves once listening, and rejects when the process exits.
  const outcome = await short.ready.then(
    () => 'listening' as const,
    () => short.child.exitCode,
  );
  if (outcome === 'listening') await stopCli(short.child);
  t.is(outcome, 1);
  t.regex(short.output(), /INVALID_CONFIG: GATEWAY_API_KEY is 21 characters; an account key must have at least 24/);
  t.false(short.output().includes('gw-too-short-key-1234'));
  t.false(short.output().includes('gateway listening'));
});
