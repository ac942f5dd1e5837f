import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { PassThrough } from 'node:stream';
import test from 'ava';
import { runVaultCli } from '../../core/cli/vault.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, startGateway } from '../harness.js';
import { chatWithKey, createKey, fixedUsageHandler } from './vault-harness.js';

let fake: Fake;
test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
});
test.after.always(async () => {
  await fake?.close();
});

const newDataDir = () => mkdtempSync(join(tmpdir(), 'vault-restart-'));
const secretOf = (label: string) => `sk-${label}-${randomBytes(12).toString('hex')}`;

test.serial('credentials and keys survive a restart on the embedded store and decrypt with the generated master key', async (t) => {
  const dataDir = newDataDir();
  const secret = secretOf('restart');
  const first = await startGateway({}, { GATEWAY_DATA_DIR: dataDir });
  const { key } = await createKey(t, first, { name: 'survivor', provider: 'openai', provider_key: secret, custom_host: fake.baseUrl });
  t.is((await chatWithKey(first, key)).status, 200);
  await first.close();

  t.is(statSync(join(dataDir, 'master.key')).mode & 0o777, 0o600, 'the generated master key is readable by its owner only');
  t.is(statSync(join(dataDir, 'gateway.sqlite')).mode & 0o777, 0o600);
  const stored = readFileSync(join(dataDir, 'gateway.sqlite'));
  t.false(stored.includes(secret), 'the provider key is not stored in clear');
  t.false(stored.includes(key), 'the virtual key value is not stored');

  const second = await startGateway({}, { GATEWAY_DATA_DIR: dataDir });
  try {
    t.is((await chatWithKey(second, key)).status, 200);
    t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${secret}`);
  } finally {
    await second.close();
  }
});

test.serial('a wrong master key fails start-up with a clear message', async (t) => {
  const dataDir = newDataDir();
  const right = randomBytes(32).toString('hex');
  const first = await startGateway({}, { GATEWAY_DATA_DIR: dataDir, GATEWAY_MASTER_KEY: right });
  await createKey(t, first, { name: 'sealed', provider: 'openai', provider_key: secretOf('wrong'), custom_host: fake.baseUrl });
  await first.close();

  const error = await t.throwsAsync(startGateway({}, { GATEWAY_DATA_DIR: dataDir, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') }));
  t.regex(error!.message, /INVALID_CONFIG: the master key \(id [0-9a-f]{16}\) cannot open this gateway's vault, sealed under master key id [0-9a-f]{16}/);
  t.false(error!.message.includes(right));

  const malformed = await t.throwsAsync(startGateway({}, { GATEWAY_DATA_DIR: dataDir, GATEWAY_MASTER_KEY: 'too-short' }));
  t.regex(malformed!.message, /master key must be 32 bytes/);
});

test.serial('a tampered stored credential is refused and never sent upstream', async (t) => {
  const dataDir = newDataDir();
  const gateway = await startGateway({ vault: { credentialCacheMs: 0 } }, { GATEWAY_DATA_DIR: dataDir });
  try {
    const { key } = await createKey(t, gateway, { name: 'tampered', provider: 'openai', provider_key: secretOf('tamper'), custom_host: fake.baseUrl });
    t.is((await chatWithKey(gateway, key)).status, 200);
    const database = new DatabaseSync(join(dataDir, 'gateway.sqlite'));
    const row = database.prepare("SELECT key, value FROM keyv WHERE key LIKE 'cred:%'").get() as { key: string; value: string };
    const stored = JSON.parse(row.value);
    const bytes = Buffer.from(stored.value.sealed.ciphertext, 'base64');
    bytes[bytes.length - 1] ^= 0x01;
    stored.value.sealed.ciphertext = bytes.toString('base64');
    database.prepare('UPDATE keyv SET value = ? WHERE key = ?').run(JSON.stringify(stored), row.key);
    database.close();

    const sent = fake.requests.length;
    const refused = await chatWithKey(gateway, key);
    t.is(refused.status, 500);
    t.is(refused.json.error.code, 'credential_tampered');
    t.is(fake.requests.length, sent, 'nothing reached the provider');
  } finally {
    await gateway.close();
  }
});

function cliIo(environment: NodeJS.ProcessEnv, stdinText = '') {
  let out = '';
  let err = '';
  const stdin = new PassThrough();
  stdin.end(stdinText);
  return {
    io: {
      stdout: new PassThrough().on('data', (chunk: Buffer) => (out += chunk)),
      stderr: new PassThrough().on('data', (chunk: Buffer) => (err += chunk)),
      stdin,
      environment,
    },
    out: () => out,
    err: () => err,
  };
}

test.serial('the CLI rotates a key-file master key while a gateway keeps serving', async (t) => {
  const dataDir = newDataDir();
  const secret = secretOf('rotate');
  const gateway = await startGateway({ vault: { credentialCacheMs: 0 } }, { GATEWAY_DATA_DIR: dataDir });
  try {
    const { key } = await createKey(t, gateway, { name: 'rotating', provider: 'openai', provider_key: secret, custom_host: fake.baseUrl });
    const before = readFileSync(join(dataDir, 'master.key'), 'utf8');
    const cli = cliIo({ GATEWAY_DATA_DIR: dataDir, GATEWAY_API_KEY: ACCOUNT_KEY });
    t.is(await runVaultCli(['rotate-master-key'], { providers: [openai()] }, cli.io), 0, cli.err());
    const result = JSON.parse(cli.out());
    t.is(result.rewrapped, 1);
    t.is(result.source, 'file');
    const after = readFileSync(join(dataDir, 'master.key'), 'utf8');
    t.not(after, before);
    t.is(after.trim().split('\n').length, 1, 'the old key is gone from the file');
    t.is(statSync(join(dataDir, 'master.key')).mode & 0o777, 0o600);
    t.is((await chatWithKey(gateway, key)).status, 200, 'the running instance reads the re-wrapped record');
    t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${secret}`);
  } finally {
    await gateway.close();
  }
  const restarted = await startGateway({}, { GATEWAY_DATA_DIR: dataDir });
  await restarted.close();
  t.pass('restarts with the new key');
});

test.serial('the CLI re-wraps under the first GATEWAY_MASTER_KEY ("new,old"); then the new key alone opens the vault', async (t) => {
  const dataDir = newDataDir();
  const oldKey = randomBytes(32).toString('hex');
  const newKey = randomBytes(32).toString('base64');
  const first = await startGateway({}, { GATEWAY_DATA_DIR: dataDir, GATEWAY_MASTER_KEY: oldKey });
  const { key } = await createKey(t, first, { name: 'env-rotating', provider: 'openai', provider_key: secretOf('env'), custom_host: fake.baseUrl });
  await first.close();
  const cli = cliIo({ GATEWAY_DATA_DIR: dataDir, GATEWAY_MASTER_KEY: `${newKey},${oldKey}` });
  t.is(await runVaultCli(['rotate-master-key'], { providers: [openai()] }, cli.io), 0, cli.err());
  t.is(JSON.parse(cli.out()).rewrapped, 1);
  const second = await startGateway({}, { GATEWAY_DATA_DIR: dataDir, GATEWAY_MASTER_KEY: newKey });
  try {
    t.is((await chatWithKey(second, key)).status, 200);
  } finally {
    await second.close();
  }
  await t.throwsAsync(startGateway({}, { GATEWAY_DATA_DIR: dataDir, GATEWAY_MASTER_KEY: oldKey }), { message: /cannot open this gateway's vault/ });
});

test.serial('the CLI creates, lists and deletes keys, taking the provider key from stdin, never argv', async (t) => {
  const dataDir = newDataDir();
  const secret = secretOf('cli');
  const environment = { GATEWAY_DATA_DIR: dataDir };
  const created = cliIo(environment, `${secret}\n`);
  const argv = ['keys', 'create', '--name', 'from-cli', '--provider', 'openai', '--custom-host', fake.baseUrl, '--rpm', '5', '--stdin'];
  t.is(await runVaultCli(argv, { providers: [openai()] }, created.io), 0, created.err());
  const record = JSON.parse(created.out());
  t.regex(record.key, /^vk-/);
  t.deepEqual(record.limits, { requests_per_minute: 5 });
  t.false(created.out().includes(secret));

  const listed = cliIo(environment);
  t.is(await runVaultCli(['keys', 'list'], { providers: [openai()] }, listed.io), 0);
  t.false(listed.out().includes(record.key));
  t.is(JSON.parse(listed.out())[0].name, 'from-cli');
  t.is(JSON.parse(listed.out())[0].log_bodies, true, 'bodies are logged unless asked otherwise');

  const quiet = cliIo(environment, secret);
  t.is(await runVaultCli(['keys', 'create', '--name', 'quiet-cli', '--provider', 'openai', '--no-log-bodies', '--stdin'], { providers: [openai()] }, quiet.io), 0, quiet.err());
  const quietRecord = JSON.parse(quiet.out());
  t.is(quietRecord.log_bodies, false);
  const restricted = cliIo(environment, secret);
  const restrictedArgs = ['keys', 'create', '--name', 'restricted-cli', '--provider', 'openai', '--users', 'alice,bob', '--models', 'gpt-4o-mini', '--stdin'];
  t.is(await runVaultCli(restrictedArgs, { providers: [openai()] }, restricted.io), 0, restricted.err());
  const restrictedRecord = JSON.parse(restricted.out());
  t.deepEqual(restrictedRecord.limits, { allowed_users: ['alice', 'bob'], allowed_models: ['gpt-4o-mini'] });
  t.is(await runVaultCli(['keys', 'delete', restrictedRecord.id], { providers: [openai()] }, cliIo(environment).io), 0);
  const droppedQuiet = cliIo(environment);
  t.is(await runVaultCli(['keys', 'delete', quietRecord.id], { providers: [openai()] }, droppedQuiet.io), 0, droppedQuiet.err());

  const invalid = cliIo(environment, secret);
  t.is(await runVaultCli(['keys', 'create', '--name', 'bad', '--provider', 'nope', '--stdin'], { providers: [openai()] }, invalid.io), 1);
  t.regex(invalid.err(), /unknown provider "nope".*\(provider\)/);

  const gateway = await startGateway({}, { GATEWAY_DATA_DIR: dataDir });
  try {
    t.is((await chatWithKey(gateway, record.key)).status, 200);
    t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${secret}`);
  } finally {
    await gateway.close();
  }
  const removed = cliIo(environment);
  t.is(await runVaultCli(['keys', 'delete', record.id], { providers: [openai()] }, removed.io), 0, removed.err());
  const empty = cliIo(environment);
  await runVaultCli(['keys', 'list'], { providers: [openai()] }, empty.io);
  t.deepEqual(JSON.parse(empty.out()), []);
});
