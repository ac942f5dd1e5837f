import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { FIXED_MESSAGES, fixedUsageHandler } from '../vault/vault-harness.js';

// GATEWAY_WORKERS=2 on the embedded store: the two workers' acquires go to the primary, which holds
// the one quota store, so a provider quota is counted once for both.

let child: ChildProcess;
let fake: Fake;
let url: string;
let accountKey: string;

test.before(async () => {
  fake = await startFake(fixedUsageHandler(20));
  child = spawn(process.execPath, ['dist/core/main.js', 'start'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-quota-workers-')), GATEWAY_WORKERS: '2' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  while (!/2 workers listening/.test(output)) {
    if (child.exitCode !== null) throw new Error(`the gateway exited: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  url = /gateway listening on (http:\/\/\S+)/.exec(output)![1];
  accountKey = /\n {2}(gw-\S+)\n/.exec(output)![1];
});

test.after.always(async () => {
  if (child?.exitCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
  await fake?.close();
});

/** On a connection of its own, so that either worker may take it. */
const call = async (path: string, key: string, body: unknown) => {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, connection: 'close' }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as any };
};

test('two workers share one quota through the primary: 40 concurrent requests against 10 per minute, exactly 10 sent', async (t) => {
  const credential = await call('/admin/credentials', accountKey, { name: 'workers-quota', provider: 'openai', api_key: 'sk-workers-0123456789', quota: { requests_per_minute: 10, max_wait_ms: 0 } });
  t.is(credential.status, 201);
  const key = await call('/admin/virtual-keys', accountKey, { name: 'workers-key', provider: 'openai', credential_id: credential.json.id, custom_host: fake.baseUrl });
  t.is(key.status, 201);
  const answers = await Promise.all(Array.from({ length: 40 }, () => call('/v1/chat/completions', key.json.key, { model: 'gpt-4o-mini', messages: FIXED_MESSAGES, max_tokens: 10 })));
  const statuses = answers.map((answer) => answer.status);
  t.is(statuses.filter((status) => status === 200).length, 10, statuses.join(','));
  t.true(answers.filter((answer) => answer.status === 429).every((answer) => answer.json.error.code === 'quota_wait_exceeded'));
  t.is(fake.requests.length, 10, 'the provider got exactly the quota');
});
