import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { startGateway } from './harness.js';
import { chatWithKey, createKey } from './vault/vault-harness.js';

const run = promisify(execFile);
const BIN = join(process.cwd(), 'bin/llm-gateway.js');

/** The shell blocks of docs/operations.md's backup section that start with `# <comment>`. */
function documentedBlock(comment: string): string {
  const page = readFileSync(join(process.cwd(), 'docs/operations.md'), 'utf8');
  const block = [...page.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]).find((text) => text.startsWith(`# ${comment}`));
  if (block === undefined) throw new Error(`docs/operations.md has no sh block starting "# ${comment}"`);
  return block;
}

/** Runs a documented block with bash, `llm-gateway` being this checkout's command, Node 24 first on PATH. */
async function runBlock(block: string, environment: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  const script = `set -euo pipefail\nllm-gateway() { node ${JSON.stringify(BIN)} "$@"; }\n${block}`;
  return run('bash', ['--norc', '--noprofile', '-c', script], { env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, ...environment } });
}

let fake: Fake;
test.before(async () => {
  fake = await startFake();
});
test.after.always(async () => {
  await fake?.close();
});

test('the documented backup runs while a gateway serves, and the documented restore gives a gateway whose keys and sealed credentials work', async (t) => {
  t.timeout(120_000);
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gateway-backup-')), 'data');
  const backups = mkdtempSync(join(tmpdir(), 'gateway-backups-'));
  const secret = 'sk-backed-up-provider-secret-0123';
  const gateway = await startGateway({}, { GATEWAY_DATA_DIR: dataDir });
  let kept: { key: string };
  let later: { key: string };
  try {
    kept = await createKey(t, gateway, { name: 'kept', provider: 'openai', provider_key: secret, custom_host: fake.baseUrl, limits: { budget_usd: 1 } });
    t.is((await chatWithKey(gateway, kept.key)).status, 200);
    // Requests in flight while the backup runs: the gateway keeps writing counters and logs.
    const traffic = Promise.all(Array.from({ length: 10 }, () => chatWithKey(gateway, kept.key)));
    const backedUp = await runBlock(documentedBlock('backup'), { GATEWAY_DATA_DIR: dataDir, BACKUP_DIR: backups });
    t.is(backedUp.stderr, '');
    t.deepEqual((await traffic).map((answer) => answer.status), new Array(10).fill(200));
    later = await createKey(t, gateway, { name: 'after-the-backup', provider: 'openai', provider_key: 'sk-later-0123456789', custom_host: fake.baseUrl });
  } finally {
    await gateway.gateway.close();
  }

  const [backup] = readdirSync(backups);
  const files = readdirSync(join(backups, backup)).sort();
  t.true(files.includes('master.key') && files.includes('gateway.sqlite'), files.join(', '));
  t.false(files.some((file) => file.endsWith('-wal') || file.endsWith('-shm')), 'a backup is whole files, no journal');
  for (const file of files) t.is(statSync(join(backups, backup, file)).mode & 0o777, 0o600, file);

  const restoredDir = join(mkdtempSync(join(tmpdir(), 'gateway-restored-')), 'data');
  const restored = await runBlock(documentedBlock('restore'), { GATEWAY_DATA_DIR: restoredDir, BACKUP: join(backups, backup) });
  t.regex(restored.stdout, /\[ok\]\s+master key/, 'doctor: the master key opens the restored vault');
  t.is(statSync(restoredDir).mode & 0o777, 0o700);

  const again = await startGateway({}, { GATEWAY_DATA_DIR: restoredDir });
  try {
    t.is((await chatWithKey(again, kept.key)).status, 200, 'a key from before the backup works');
    t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${secret}`, 'its sealed credential opens with the restored master key');
    t.is((await chatWithKey(again, later.key)).status, 401, 'a key created after the backup is unknown');
  } finally {
    await again.gateway.close();
  }
});
