import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { fixedUsageHandler } from './vault-harness.js';

let fake: Fake;
test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
});
test.after.always(async () => {
  await fake?.close();
});

test('the request thread never holds the master key: not in its env, not anywhere in its heap', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'vault-isolation-'));
  const masterKey = randomBytes(32);
  const masterHex = masterKey.toString('hex');
  const providerKey = `sk-isolation-${randomBytes(16).toString('hex')}`;
  const snapshot = join(directory, 'request-thread.heapsnapshot');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [join(import.meta.dirname, 'isolation-child.js')], {
      env: {
        PATH: process.env.PATH,
        GATEWAY_DATA_DIR: directory,
        GATEWAY_API_KEY: 'gw-isolation-account-key-0123456789',
        GATEWAY_MASTER_KEY: masterHex,
        TEST_PROVIDER_KEY: providerKey,
        TEST_UPSTREAM: fake.baseUrl,
        TEST_SNAPSHOT: snapshot,
        LOG_LEVEL: 'error',
      },
      timeout: 30_000,
      maxBuffer: 1024 * 1024,
    });
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as { status: number; masterKeyInEnv: boolean; snapshot: string };
    t.is(report.status, 200, 'the request was served with the decrypted credential');
    t.false(report.masterKeyInEnv, 'GATEWAY_MASTER_KEY was deleted from the request thread’s environment after the hand-off');
    t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${providerKey}`);

    const heap = readFileSync(report.snapshot, 'utf8');
    // Positive control: the decrypted provider key is cached in this thread, and the snapshot shows it.
    t.true(heap.includes(providerKey), 'the snapshot does show strings the thread holds');
    for (const form of [masterHex, masterHex.toUpperCase(), masterKey.toString('base64'), masterKey.toString('base64url')]) {
      t.false(heap.includes(form), 'no form of the master key is in the request thread’s heap');
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
