import { createClient } from '@keyv/redis';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createGateway } from '../core/app.js';
import { openai } from '../plugins/providers/openai/index.js';
import { DATABASE_URL, postgresReachable } from './logs/fixtures.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from './vault/vault-harness.js';

const BIN = join(process.cwd(), 'bin/llm-gateway.js');
const COMMANDS = ['start', 'keys', 'credentials', 'routes', 'rotate-master-key', 'reset-account-key', 'doctor', 'audit'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `llm-gateway …` (the package's bin) to its end, with `input` on stdin. */
async function gatewayCommand(args: string[], environment: Record<string, string> = {}, input = '', node = process.execPath): Promise<Run> {
  const child = spawn(node, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...environment }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input);
  // 'close', not 'exit': the output may still be in the pipe when the process has exited.
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const newDataDir = () => join(mkdtempSync(join(tmpdir(), 'gateway-cli-commands-')), 'data');

test('no arguments prints the help and exits 0; --help on every command exits 0 with its usage', async (t) => {
  const bare = await gatewayCommand([]);
  t.is(bare.code, 0, bare.stderr);
  t.regex(bare.stdout, /usage: llm-gateway <command>/);
  for (const command of COMMANDS) t.true(bare.stdout.includes(`  ${command} `), `the help lists ${command}`);
  for (const command of COMMANDS) {
    const help = await gatewayCommand([command, '--help']);
    t.is(help.code, 0, `${command} --help: ${help.stderr}`);
    t.true(help.stdout.startsWith(`usage: llm-gateway ${command}`), help.stdout);
  }
  const nested = await gatewayCommand(['keys', 'create', '-h']);
  t.is(nested.code, 0);
  t.regex(nested.stdout, /keys create --name <name> --provider <id>/);
  const missing = await gatewayCommand(['start', '--config', '/nonexistent/gateway.config.ts']);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /^gateway failed to start: INVALID_CONFIG: --config \/nonexistent\/gateway\.config\.ts could not be loaded/);
  const noFile = await gatewayCommand(['doctor', '--config']);
  t.is(noFile.code, 2);
  t.regex(noFile.stderr, /--config needs a file/);
  const noAction = await gatewayCommand(['keys']);
  t.is(noAction.code, 2);
  t.regex(noAction.stderr, /^keys needs an action\n\nusage: llm-gateway keys <action>/);
  const unknown = await gatewayCommand(['serve']);
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /unknown command "serve"/);
});

test('npm start runs the start command explicitly', (t) => {
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
  t.regex(scripts.start, /dist\/core\/main\.js start$/);
});

test('an older Node gets a clear message from the bin, not a crash', async (t) => {
  const system = '/usr/bin/node';
  const version = existsSync(system) ? spawnSync(system, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim() : '';
  if (!version || Number(version.split('.')[0]) >= 24) {
    t.log(`no Node older than 24 at ${system} (found "${version}"): the check is not exercised here`);
    t.pass();
    return;
  }
  for (const entry of [BIN, join(process.cwd(), 'dist/core/main.js')]) {
    const child = spawnSync(system, [entry, 'start'], { encoding: 'utf8', env: { PATH: '' } });
    t.is(child.status, 1, entry);
    t.true(child.stderr.startsWith(`llm-gateway needs Node 24 or later; this is Node ${version}`), child.stderr);
    t.false(child.stderr.includes('enableCompileCache'));
  }
});

test('keys: human output by default, JSON with --json, errors name the flags', async (t) => {
  const environment = { GATEWAY_DATA_DIR: newDataDir() };
  const created = await gatewayCommand(['keys', 'create', '--name', 'human', '--provider', 'openai', '--rpm', '5', '--stdin'], environment, 'sk-cli-secret-0123\n');
  t.is(created.code, 0, created.stderr);
  t.regex(created.stdout, /^id: vk_[0-9a-f]+$/m);
  t.regex(created.stdout, /^key: vk-\S+$/m);
  t.regex(created.stdout, /^limits: \{"requests_per_minute":5\}$/m);
  t.false(created.stdout.includes('sk-cli-secret-0123'));

  const listed = await gatewayCommand(['keys', 'list', '--json'], environment);
  t.is(listed.code, 0, listed.stderr);
  t.is((JSON.parse(listed.stdout) as Array<{ name: string }>)[0].name, 'human');
  const shown = await gatewayCommand(['keys', 'show', (JSON.parse(listed.stdout) as Array<{ id: string }>)[0].id], environment);
  t.regex(shown.stdout, /^name: human$/m);

  const unknownProvider = await gatewayCommand(['keys', 'create', '--name', 'bad', '--provider', 'nope', '--stdin'], environment, 'sk-x');
  t.is(unknownProvider.code, 1);
  t.regex(unknownProvider.stderr, /unknown provider "nope".*\(--provider\)/);
  const badPeriod = await gatewayCommand(['keys', 'create', '--name', 'bad', '--provider', 'openai', '--budget-usd', '5', '--budget-period', 'fortnight', '--stdin'], environment, 'sk-x');
  t.is(badPeriod.code, 1);
  t.regex(badPeriod.stderr, /\(--budget-period\)/);
  t.false(badPeriod.stderr.includes('limits.budget_period'));
  const notNumber = await gatewayCommand(['keys', 'create', '--name', 'bad', '--provider', 'openai', '--rpm', 'many'], environment);
  t.is(notNumber.code, 2);
  t.regex(notNumber.stderr, /--rpm must be a number/);
});

test('--stdin at a terminal prompts without echoing the secret', async (t) => {
  if (!existsSync('/usr/bin/script')) {
    t.log('no script(1) to give the command a terminal');
    t.pass();
    return;
  }
  const dataDir = newDataDir();
  // With --stdin, and without it when GATEWAY_PROVIDER_KEY is unset: the terminal is asked.
  for (const flags of ['--stdin', '']) {
    const command = `'${process.execPath}' '${BIN}' credentials create --name typed ${flags}`;
    const child = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', GATEWAY_DATA_DIR: dataDir }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      // Typed only once the prompt is up: raw mode is on, so the terminal does not echo it.
      if (output.includes('not shown') && !child.stdin.writableEnded) child.stdin.end('sk-typed-secret-4242\r');
    });
    // 'close', not 'exit': the output may still be on its way when the process has exited.
    const [code] = (await once(child, 'close')) as [number | null];
    t.is(code, 0, output);
    t.regex(output, /secret \(typed, not shown\): /);
    t.regex(output, /has_api_key: true/);
    t.false(output.includes('sk-typed-secret-4242'), 'the secret is not echoed');
  }
});

test('rotate-master-key reports its progress on stderr', async (t) => {
  const environment = { GATEWAY_DATA_DIR: newDataDir() };
  for (const name of ['one', 'two', 'three']) {
    t.is((await gatewayCommand(['credentials', 'create', '--name', name, '--stdin'], environment, `sk-${name}-secret`)).code, 0);
  }
  const rotated = await gatewayCommand(['rotate-master-key'], environment);
  t.is(rotated.code, 0, rotated.stderr);
  t.regex(rotated.stderr, /re-wrapping 3 stored credentials under a new master key…\n {2}done in \d+\.\d s/);
  t.regex(rotated.stdout, /^rewrapped: 3$/m);
});

test('doctor: a fresh setup passes; wrong modes, unreachable Redis and PostgreSQL, a wrong master key and a bad config fail', async (t) => {
  const dataDir = newDataDir();
  const fresh = await gatewayCommand(['doctor'], { GATEWAY_DATA_DIR: dataDir });
  t.is(fresh.code, 0, fresh.stdout + fresh.stderr);
  t.regex(fresh.stdout, /^\[ok\] +node +Node 24\./m);
  t.regex(fresh.stdout, /^\[ok\] +config +the shipped gateway.config loads and validates/m);
  t.regex(fresh.stdout, /^\[skip\] +redis +REDIS_URL is not set/m);

  // A data dir as the gateway leaves it: a store, a vault and a key file.
  t.is((await gatewayCommand(['credentials', 'create', '--name', 'c', '--stdin'], { GATEWAY_DATA_DIR: dataDir }, 'sk-doctor')).code, 0);
  const healthy = await gatewayCommand(['doctor', '--json'], { GATEWAY_DATA_DIR: dataDir });
  t.is(healthy.code, 0, healthy.stdout);
  const report = JSON.parse(healthy.stdout) as { ok: boolean; checks: Array<{ name: string; status: string; detail: string }> };
  t.true(report.ok);
  t.is(report.checks.find((check) => check.name === 'data dir')?.status, 'ok');
  t.regex(report.checks.find((check) => check.name === 'master key')!.detail, /opens the stored vault \(master key id [0-9a-f]{16}\)/);

  chmodSync(dataDir, 0o755);
  chmodSync(join(dataDir, 'master.key'), 0o644);
  const [redisPort, postgresPort] = [await closedPort(), await closedPort()];
  const broken = await gatewayCommand(['doctor'], {
    GATEWAY_DATA_DIR: dataDir,
    REDIS_URL: `redis://:redis-password@127.0.0.1:${redisPort}`,
    DATABASE_URL: `postgres://user:pg-password@127.0.0.1:${postgresPort}/logs`,
  });
  t.is(broken.code, 1);
  t.regex(broken.stdout, new RegExp(`^\\[fail\\] +data dir +${dataDir} is 0755 \\(chmod 700 ${dataDir}\\); ${dataDir}/master.key is 0644`, 'm'));
  t.regex(broken.stdout, new RegExp(`^\\[fail\\] +redis +127.0.0.1:${redisPort} is not reachable`, 'm'));
  t.regex(broken.stdout, new RegExp(`^\\[fail\\] +postgresql +127.0.0.1:${postgresPort}`, 'm'));
  t.regex(broken.stdout, /^3 checks failed$/m);
  t.false(broken.stdout.includes('password'), 'no URL credentials are printed');

  chmodSync(dataDir, 0o700);
  chmodSync(join(dataDir, 'master.key'), 0o600);
  const wrongKey = await gatewayCommand(['doctor'], { GATEWAY_DATA_DIR: dataDir, GATEWAY_MASTER_KEY: 'ab'.repeat(32) });
  t.is(wrongKey.code, 1);
  t.regex(wrongKey.stdout, /^\[fail\] +master key +INVALID_CONFIG: the master key \(id [0-9a-f]{16}\) cannot open this gateway's vault/m);
  t.false(wrongKey.stdout.includes('ab'.repeat(32)));

  const configDir = mkdtempSync(join(tmpdir(), 'gateway-doctor-config-'));
  mkdirSync(join(configDir, 'sub'));
  writeFileSync(join(configDir, 'sub/bad.config.mjs'), 'export default { providers: "openai" };\n');
  const badConfig = await gatewayCommand(['doctor', '--config', join(configDir, 'sub/bad.config.mjs')], { GATEWAY_DATA_DIR: dataDir });
  t.is(badConfig.code, 1);
  t.regex(badConfig.stdout, /^\[fail\] +config +INVALID_CONFIG: providers must be an array/m);
});

test('routes check validates a route file with the gateway validator and names the field at fault', async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'gateway-routes-'));
  const good = join(folder, 'fallback.json');
  writeFileSync(good, JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ name: 'primary', provider: 'openai' }, { name: 'backup', provider: 'anthropic' }] }));
  const checked = await gatewayCommand(['routes', 'check', good]);
  t.is(checked.code, 0, checked.stderr);
  t.is(checked.stdout, 'route ok: fallback, 2 targets (primary → openai, backup → anthropic)\n');
  const fromStdin = await gatewayCommand(['routes', 'check', '-', '--json'], {}, readFileSync(good, 'utf8'));
  t.true((JSON.parse(fromStdin.stdout) as { valid: boolean }).valid);

  const badWeight = join(folder, 'weight.json');
  writeFileSync(badWeight, JSON.stringify({ strategy: { mode: 'loadbalance' }, targets: [{ provider: 'openai' }, { provider: 'openai', weight: -1 }] }));
  const refused = await gatewayCommand(['routes', 'check', badWeight]);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /^error: Invalid route at 'route\.targets\[1\]\.weight'/);
  const unknownProvider = join(folder, 'unknown.json');
  writeFileSync(unknownProvider, JSON.stringify({ strategy: { mode: 'single' }, targets: [{ provider: 'nope' }] }));
  const notConfigured = await gatewayCommand(['routes', 'check', unknownProvider]);
  t.is(notConfigured.code, 1);
  t.regex(notConfigured.stderr, /route\.targets\[0\]\.provider names "nope", which is not configured/);
});

test('routes list, show and versions read the stored routes of the admin API', async (t) => {
  const dataDir = newDataDir();
  const environment = { GATEWAY_DATA_DIR: dataDir, GATEWAY_API_KEY: 'gw-cli-routes-account-key-0123456789' };
  const gateway = createGateway({ providers: [openai()] }, { environment, logDestination: { write: () => {} } });
  const { url } = await gateway.listen(0, '127.0.0.1');
  const call = async (method: string, path: string, body: unknown) =>
    (await fetch(`${url}${path}`, { method, headers: { 'x-gateway-api-key': environment.GATEWAY_API_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<{ id: string }>;
  const route = { strategy: { mode: 'fallback' }, targets: [{ name: 'primary', provider: 'openai' }, { name: 'backup', provider: 'openai' }] };
  const created = await call('POST', '/admin/routes', { name: 'resilient', route });
  await call('PUT', `/admin/routes/${created.id}`, { name: 'resilient', route: { ...route, retry: { attempts: 1 } } });
  await gateway.close();

  const listed = await gatewayCommand(['routes', 'list'], environment);
  t.is(listed.code, 0, listed.stderr);
  t.regex(listed.stdout, new RegExp(`^${created.id}  resilient  v2  fallback, 2 targets \\(primary → openai, backup → openai\\)`, 'm'));
  const shown = await gatewayCommand(['routes', 'show', 'resilient', '--json'], environment);
  t.like(JSON.parse(shown.stdout), { id: created.id, name: 'resilient', version: 2, route: { retry: { attempts: 1 } } });
  const versions = await gatewayCommand(['routes', 'versions', created.id, '--json'], environment);
  t.deepEqual((JSON.parse(versions.stdout) as { data: Array<{ version: number }> }).data.map((entry) => entry.version), [1, 2]);
  const missing = await gatewayCommand(['routes', 'show', 'nope'], environment);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /no stored route with the id or name "nope"/);
});

test('doctor: reachable Redis and PostgreSQL pass, and a master key is checked against the vault in Redis without creating one', async (t) => {
  if (!(await redisAvailable()) || !(await postgresReachable()).ok) {
    t.log(`Redis (${REDIS_URL}) or PostgreSQL (${DATABASE_URL}) is not reachable here`);
    t.pass();
    return;
  }
  const prefix = `doctor-${process.pid}-${Date.now()}`;
  const environment = { GATEWAY_DATA_DIR: newDataDir(), REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, DATABASE_URL, GATEWAY_MASTER_KEY: 'cd'.repeat(32) };
  try {
    const before = await gatewayCommand(['doctor'], environment);
    t.is(before.code, 0, before.stdout);
    t.regex(before.stdout, /^\[ok\] +redis +127\.0\.0\.1:\d+ answers PING$/m);
    t.regex(before.stdout, /^\[ok\] +postgresql +127\.0\.0\.1:\d+ answers a query$/m);
    t.regex(before.stdout, /^\[ok\] +master key +GATEWAY_MASTER_KEY is well formed \(no vault stored yet to open\)$/m);
    const client = createClient({ url: REDIS_URL });
    client.on('error', () => {});
    await client.connect();
    try {
      t.deepEqual(await client.keys(`${prefix}:*`), [], 'the doctor created nothing in Redis');
    } finally {
      await client.close();
    }

    t.is((await gatewayCommand(['credentials', 'create', '--name', 'shared', '--stdin'], environment, 'sk-in-redis')).code, 0);
    const after = await gatewayCommand(['doctor'], environment);
    t.is(after.code, 0, after.stdout);
    t.regex(after.stdout, /^\[ok\] +master key +GATEWAY_MASTER_KEY opens the stored vault/m);
    const wrong = await gatewayCommand(['doctor'], { ...environment, GATEWAY_MASTER_KEY: 'ef'.repeat(32) });
    t.is(wrong.code, 1);
    t.regex(wrong.stdout, /^\[fail\] +master key +INVALID_CONFIG: the master key \(id [0-9a-f]{16}\) cannot open/m);
  } finally {
    await clearRedisPrefix(prefix);
  }
});
