import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY } from '../harness.js';
import { registerLevelCases } from './level-cases.js';
import { fixedUsageHandler } from './vault-harness.js';

/** Every level's limits on the embedded store with `GATEWAY_WORKERS=2`: two processes, counted once by the primary. */
let fake: Fake;
let slow: Fake;
let child: ChildProcess;
let url: string;

test.before(async () => {
  fake = await startFake(fixedUsageHandler());
  slow = await startFake(fixedUsageHandler(1500));
  child = spawn(process.execPath, ['dist/core/main.js', 'start'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-levels-')), GATEWAY_WORKERS: '2', GATEWAY_API_KEY: ACCOUNT_KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (/2 workers listening/.test(output)) {
        clearInterval(poll);
        resolve();
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`exited with ${code}: ${output}`));
    });
  });
  url = /gateway listening on (http:\/\/\S+)/.exec(output)![1]!;
});

test.after.always(async () => {
  if (child && child.exitCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
  await fake?.close();
  await slow?.close();
});

// Each request on a connection of its own (`connection: close`), so the cluster hands them to both workers.
registerLevelCases(test.serial, () => ({ a: { url }, b: { url }, upstream: fake.baseUrl, slowUpstream: slow.baseUrl }), 'GATEWAY_WORKERS=2 on the embedded store');
