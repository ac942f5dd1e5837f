import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import test, { type ExecutionContext } from 'ava';
import { runVaultCli } from '../../core/cli/vault.js';
import { VaultService } from '../../core/vault/service.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, chatWithKey, clearRedisPrefix, createKey, fixedUsageHandler, REDIS_URL, redisAvailable } from './vault-harness.js';

let fake: Fake;
let redis = false;
const prefix = `test-rotation-${process.pid}-${randomBytes(4).toString('hex')}`;

test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
  redis = await redisAvailable();
});
test.after.always(async () => {
  await fake?.close();
  if (redis) await clearRedisPrefix(prefix);
});

const secretOf = (label: string) => `sk-${label}-${randomBytes(12).toString('hex')}`;
const keyLines = (dataDir: string) => readFileSync(join(dataDir, 'master.key'), 'utf8').trim().split('\n').length;

/** `rotate-master-key` run by the CLI, as an operator would, beside the running gateways. */
async function rotate(t: ExecutionContext, environment: NodeJS.ProcessEnv): Promise<{ rewrapped: number; still_in_use: string[] }> {
  let out = '';
  let err = '';
  const stdin = new PassThrough();
  stdin.end();
  const io = {
    stdout: new PassThrough().on('data', (chunk: Buffer) => (out += chunk)),
    stderr: new PassThrough().on('data', (chunk: Buffer) => (err += chunk)),
    stdin,
    environment,
  };
  t.is(await runVaultCli(['rotate-master-key'], { providers: [openai()] }, io), 0, err);
  return JSON.parse(out);
}

/** A credential stored through the admin API and a key using it, plus a key with its own provider_key. */
async function createAfterRotation(t: ExecutionContext, gateway: TestGateway, label: string) {
  const shared = secretOf(`${label}-shared`);
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: `${label}-credential`, provider: 'openai', api_key: shared });
  t.is(credential.status, 201, credential.text);
  const viaCredential = await createKey(t, gateway, { name: `${label}-via-credential`, provider: 'openai', credential_id: credential.json.id, custom_host: fake.baseUrl });
  const own = secretOf(`${label}-own`);
  const withOwnKey = await createKey(t, gateway, { name: `${label}-own-key`, provider: 'openai', provider_key: own, custom_host: fake.baseUrl });
  return [
    { key: viaCredential.key, secret: shared },
    { key: withOwnKey.key, secret: own },
  ];
}

async function callsReachTheProvider(t: ExecutionContext, gateway: TestGateway, keys: Array<{ key: string; secret: string }>, when: string): Promise<void> {
  for (const { key, secret } of keys) {
    const answer = await chatWithKey(gateway, key);
    t.is(answer.status, 200, `${when}: ${JSON.stringify(answer.json)}`);
    t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${secret}`, when);
  }
}

test.serial('embedded store: rotate with the gateway running, create a credential and keys, restart: every call still works', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vault-rotation-'));
  const environment = { GATEWAY_DATA_DIR: dataDir };
  let gateway = await startGateway({ vault: { credentialCacheMs: 0 } }, environment);
  let keys: Array<{ key: string; secret: string }>;
  try {
    const before = await createAfterRotation(t, gateway, 'before');
    const first = await rotate(t, { ...environment });
    t.is(first.rewrapped, 2);
    t.deepEqual(first.still_in_use, []);
    keys = [...before, ...(await createAfterRotation(t, gateway, 'after'))];
    await callsReachTheProvider(t, gateway, keys, 'after the rotation, cache off');
    // A second rotation re-wraps what the gateway sealed after the first, then retires that key too.
    t.is((await rotate(t, { ...environment })).rewrapped, 4);
    t.is(keyLines(dataDir), 1, 'only the current key is left in the file');
    await callsReachTheProvider(t, gateway, keys, 'after the second rotation');
  } finally {
    await gateway.close();
  }
  gateway = await startGateway({}, environment);
  try {
    await callsReachTheProvider(t, gateway, keys, 'after a restart');
  } finally {
    await gateway.close();
  }
});

const embeddedService = (dataDir: string) =>
  new VaultService({ dataDir, redisPrefix: 'gateway', environment: {}, credentialCacheMs: 0, outputTokenEstimate: 1024 });

test.serial('a rotation that completes while a credential is being stored: the writer re-wraps it, so retiring the old key loses nothing', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vault-rotation-race-'));
  const gateway = embeddedService(dataDir);
  const operator = embeddedService(dataDir);
  await gateway.start();
  await operator.start();
  const records = gateway.parts.state.records;
  const store = records.set.bind(records);
  let rotated: Awaited<ReturnType<VaultService['rotateMasterKey']>> | undefined;
  // The gateway has sealed under the old key; before its record is stored, a whole rotation runs.
  records.set = (async (key: string, value: unknown, ttl?: number) => {
    if (key.startsWith('cred:') && rotated === undefined) rotated = await operator.rotateMasterKey();
    return store(key, value, ttl);
  }) as typeof records.set;
  const secret = secretOf('race');
  let id = '';
  try {
    const created = await gateway.credentials.create({ name: 'racing', secret: { api_key: secret } });
    id = created.id;
    t.deepEqual(rotated?.retained, [], 'the rotation saw no record under the old key and retired it');
    t.is(keyLines(dataDir), 1);
    t.is(created.sealed.kid as string | undefined, rotated?.activeKeyId, 'the writer re-wrapped its record under the new key');
  } finally {
    await Promise.all([gateway.close(), operator.close()]);
  }
  const restarted = embeddedService(dataDir);
  await restarted.start();
  try {
    t.deepEqual(await restarted.credentials.open(id), { apiKey: secret });
  } finally {
    await restarted.close();
  }
});

/** A serial test that passes with a note when Redis is unreachable outside CI (redisAvailable fails under CI=true). */
const redisSerial = (title: string, implementation: (t: ExecutionContext) => Promise<void>) =>
  test.serial(title, async (t) => {
    if (!redis) {
      t.pass('Redis unreachable: skipped (see the printed reason)');
      return;
    }
    await implementation(t);
  });

redisSerial('Redis: rotate with two gateways running, create on both, restart both: every call still works on both', async (t) => {
  // Instances sharing Redis share the master key: here through one data dir (its master.key).
  const dataDir = mkdtempSync(join(tmpdir(), 'vault-rotation-redis-'));
  const environment = { REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_DATA_DIR: dataDir };
  const start = () => startGateway({ vault: { credentialCacheMs: 0 } }, { ...environment });
  let a = await start();
  let b = await start();
  let keys: Array<{ key: string; secret: string }>;
  try {
    const before = await createAfterRotation(t, a, 'redis-before');
    t.is((await rotate(t, { ...environment })).rewrapped, 2);
    t.is(keyLines(dataDir), 1);
    keys = [...before, ...(await createAfterRotation(t, a, 'redis-on-a')), ...(await createAfterRotation(t, b, 'redis-on-b'))];
    for (const gateway of [a, b]) await callsReachTheProvider(t, gateway, keys, 'after the rotation');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
  a = await start();
  b = await start();
  try {
    for (const gateway of [a, b]) await callsReachTheProvider(t, gateway, keys, 'after restarting both');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

redisSerial('Redis, GATEWAY_MASTER_KEY: an instance without the current key refuses to seal (500 master_key_unavailable) instead of sealing under the old one', async (t) => {
  const oldKey = randomBytes(32).toString('hex');
  const newKey = randomBytes(32).toString('hex');
  const environment = { REDIS_URL, GATEWAY_REDIS_PREFIX: `${prefix}-env` };
  const stale = await startGateway({ vault: { credentialCacheMs: 0 } }, { ...environment, GATEWAY_MASTER_KEY: oldKey });
  const current = await startGateway({ vault: { credentialCacheMs: 0 } }, { ...environment, GATEWAY_MASTER_KEY: `${newKey},${oldKey}` });
  try {
    await createAfterRotation(t, stale, 'env-before');
    t.is((await rotate(t, { ...environment, GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'vault-rotation-env-')), GATEWAY_MASTER_KEY: `${newKey},${oldKey}` })).rewrapped, 2);
    const refused = await admin(stale, 'POST', '/admin/credentials', { name: 'sealed-under-old', api_key: secretOf('refused') });
    t.is(refused.status, 500);
    t.is(refused.json.error.code, 'master_key_unavailable');
    t.false(refused.text.includes(oldKey) || refused.text.includes(newKey));
    const keys = await createAfterRotation(t, current, 'env-after');
    await callsReachTheProvider(t, current, keys, 'on the instance with both keys');
  } finally {
    await Promise.all([stale.close(), current.close()]);
  }
  try {
    const restarted = await startGateway({}, { ...environment, GATEWAY_MASTER_KEY: newKey });
    await restarted.close();
    t.pass('the new key alone opens the vault');
  } finally {
    await clearRedisPrefix(`${prefix}-env`);
  }
});
