import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { ACCOUNT_KEY, startGateway } from './harness.js';
import { admin, chatWithKey } from './vault/vault-harness.js';

const BIN = join(process.cwd(), 'bin/llm-gateway.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `llm-gateway …` (the package's bin) to its end, with `input` on stdin. A command that
 * should have refused its command line but serves instead (`start`) is stopped after a while, so
 * the test reports its exit code rather than hanging.
 */
async function gatewayCommand(args: string[], environment: Record<string, string> = {}, input = ''): Promise<Run> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...environment }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input);
  const stopper = setTimeout(() => child.kill('SIGTERM'), 20_000);
  // 'close', not 'exit': the output may still be in the pipe when the process has exited.
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(stopper);
  return { code, stdout, stderr };
}

const newDataDir = () => join(mkdtempSync(join(tmpdir(), 'gateway-cli-operator-')), 'data');

let fake: Fake;
test.before(async () => {
  fake = await startFake();
});
test.after.always(async () => {
  await fake?.close();
});

test.serial('keys update changes the fields given through the admin API code and keeps the rest; credentials rotate keeps the id, so the key goes on working with the new secret', async (t) => {
  const environment = { GATEWAY_DATA_DIR: newDataDir(), GATEWAY_API_KEY: ACCOUNT_KEY };
  const first = 'sk-cli-first-secret-0123456789';
  const second = 'sk-cli-second-secret-9876543210';
  // With --json stdin is the structured secret; a plain one is refused without being echoed.
  const plain = await gatewayCommand(['credentials', 'create', '--name', 'team-openai', '--json'], environment, `${first}\n`);
  t.is(plain.code, 2);
  t.regex(plain.stderr, /^with --json, stdin must be a JSON object/);
  t.false(plain.stderr.includes(first.slice(0, 6)), 'no part of the secret is echoed');
  const credential = await gatewayCommand(['credentials', 'create', '--name', 'team-openai', '--provider', 'openai', '--json'], environment, JSON.stringify({ api_key: first }));
  t.is(credential.code, 0, credential.stderr);
  const credentialId = (JSON.parse(credential.stdout) as { id: string }).id;
  const created = await gatewayCommand(
    ['keys', 'create', '--name', 'team', '--provider', 'openai', '--credential', credentialId, '--custom-host', fake.baseUrl, '--budget-usd', '5', '--rpm', '100', '--json'],
    environment,
  );
  t.is(created.code, 0, created.stderr);
  const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };

  const renamed = await gatewayCommand(['keys', 'update', id, '--name', 'team-renamed', '--rpm', '7', '--models', 'gpt-4o-mini,gpt-4o', '--json'], environment);
  t.is(renamed.code, 0, renamed.stderr);
  t.like(JSON.parse(renamed.stdout), { id, name: 'team-renamed', limits: { budget_usd: 5, requests_per_minute: 7, allowed_models: ['gpt-4o-mini', 'gpt-4o'] } });
  t.false(renamed.stdout.includes(key), 'the key value is not shown again');
  const cleared = await gatewayCommand(['keys', 'update', id, '--budget-usd', 'none', '--models', 'gpt-4o-mini', '--no-log-bodies', '--json'], environment);
  t.is(cleared.code, 0, cleared.stderr);
  t.deepEqual((JSON.parse(cleared.stdout) as { limits: unknown }).limits, { requests_per_minute: 7, allowed_models: ['gpt-4o-mini'] });
  t.is((JSON.parse(cleared.stdout) as { log_bodies: boolean }).log_bodies, false);

  // The admin API's own validation, with the flag named.
  const badPeriod = await gatewayCommand(['keys', 'update', id, '--budget-period', 'week'], environment);
  t.is(badPeriod.code, 1);
  t.regex(badPeriod.stderr, /^error: .*--budget-period/);
  const missing = await gatewayCommand(['keys', 'update', 'vk_0000000000000000000000000000dead', '--name', 'x'], environment);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /^error: .*not found|^error: no virtual key/i);
  const nothing = await gatewayCommand(['keys', 'update', id], environment);
  t.is(nothing.code, 2);
  t.regex(nothing.stderr, /^keys update needs at least one flag to change\n\nusage: llm-gateway keys/);

  let gateway = await startGateway({}, environment);
  try {
    const shown = await admin(gateway, 'GET', `/admin/virtual-keys/${id}`);
    t.like(shown.json, { name: 'team-renamed', credential_id: credentialId, limits: { requests_per_minute: 7, allowed_models: ['gpt-4o-mini'] }, log_bodies: false });
    t.is((await chatWithKey(gateway, key)).status, 200);
    t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${first}`);
    t.is((await chatWithKey(gateway, key, { model: 'gpt-4o' })).status, 403, 'the updated allowed_models hold');
  } finally {
    await gateway.gateway.close();
  }

  const rotated = await gatewayCommand(['credentials', 'rotate', credentialId, '--stdin'], environment, `${second}\n`);
  t.is(rotated.code, 0, rotated.stderr);
  t.regex(rotated.stdout, new RegExp(`^id: ${credentialId}$`, 'm'), 'the id is kept');
  t.regex(rotated.stdout, /^name: team-openai$/m);
  t.regex(rotated.stderr, /keeps its id/);
  for (const secret of [first, second]) t.false(`${rotated.stdout}${rotated.stderr}`.includes(secret), 'no secret is printed');
  const unknown = await gatewayCommand(['credentials', 'rotate', 'cred_nope', '--stdin'], environment, second);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /^error: /);

  gateway = await startGateway({}, environment);
  try {
    t.is((await chatWithKey(gateway, key)).status, 200, 'the same key works after the rotation');
    t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${second}`, 'with the new secret');
  } finally {
    await gateway.gateway.close();
  }
});

test('a bad flag or action prints one usage text, the command\'s, with no stack, and exits 2', async (t) => {
  const environment = { GATEWAY_DATA_DIR: newDataDir() };
  const cases: Array<[string[], RegExp, string]> = [
    [['keys', 'create', '--bogus'], /^unknown option --bogus for "keys create"/, 'keys'],
    [['keys', 'create', '--rmp', '5'], /^unknown option --rmp for "keys create" \(did you mean "--rpm"\?\)/, 'keys'],
    [['keys', 'list', '--stdin'], /^unknown option --stdin for "keys list"/, 'keys'],
    [['keys', 'create', '--name'], /^--name needs a value/, 'keys'],
    [['keys', 'updte', 'vk_x'], /^unknown action "keys updte" \(did you mean "update"\?\)/, 'keys'],
    [['credentials', 'rotate', 'cred_x', '--name', 'n'], /^unknown option --name for "credentials rotate"/, 'credentials'],
    [['rotate-master-key', '--force'], /^unknown option --force for "rotate-master-key"/, 'rotate-master-key'],
    [['routes', 'show', 'x', '--verbose'], /^unknown option --verbose for "routes"/, 'routes'],
    [['routes', 'lst'], /^unknown action "routes lst" \(did you mean "list"\?\)/, 'routes'],
    [['doctor', '--fix'], /^unknown option --fix for "doctor"/, 'doctor'],
    [['reset-account-key', '--yes'], /^unknown option --yes for "reset-account-key"/, 'reset-account-key'],
    [['start', '--port', '9'], /^unknown option --port for "start"/, 'start'],
    [['kyes', 'list'], /^unknown command "kyes" \(did you mean "keys"\?\)/, ''],
  ];
  for (const [args, message, command] of cases) {
    const run = await gatewayCommand(args, environment);
    const label = args.join(' ');
    t.is(run.code, 2, `${label}: ${run.stdout}${run.stderr}`);
    t.regex(run.stderr, message, label);
    t.is(run.stderr.match(/usage: /g)?.length, 1, `${label}: one usage text: ${run.stderr}`);
    t.true(run.stderr.includes(`\n\nusage: llm-gateway ${command ? `${command} ` : '<command>'}`), `${label}: the usage of ${command || 'the command line'}: ${run.stderr}`);
    t.notRegex(run.stderr, /\n\s+at /, `${label}: no stack`);
    t.is(run.stdout, '', label);
  }
});

test('routes show and versions suggest the closest stored route name', async (t) => {
  const environment = { GATEWAY_DATA_DIR: newDataDir(), GATEWAY_API_KEY: ACCOUNT_KEY };
  const gateway = await startGateway({}, environment);
  try {
    const route = { strategy: { mode: 'fallback' }, targets: [{ name: 'primary', provider: 'openai' }, { name: 'backup', provider: 'openai' }] };
    t.is((await admin(gateway, 'POST', '/admin/routes', { name: 'resilient', route })).status, 201);
    t.is((await admin(gateway, 'POST', '/admin/routes', { name: 'cheap-first', route })).status, 201);
  } finally {
    await gateway.gateway.close();
  }
  const typo = await gatewayCommand(['routes', 'show', 'resilent'], environment);
  t.is(typo.code, 1);
  t.is(typo.stderr, 'error: no stored route with the id or name "resilent" (did you mean "resilient"?)\n');
  const versions = await gatewayCommand(['routes', 'versions', 'cheap_frist'], environment);
  t.is(versions.code, 1);
  t.regex(versions.stderr, /\(did you mean "cheap-first"\?\)/);
  const far = await gatewayCommand(['routes', 'show', 'zzzzzzzz'], environment);
  t.is(far.code, 1);
  t.is(far.stderr, 'error: no stored route with the id or name "zzzzzzzz" (routes list shows them)\n');
});

test('a port in use stops the start with one line naming the address and the fix, not a stack', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const { port } = blocker.address() as { port: number };
  try {
    const run = await gatewayCommand(['start'], { GATEWAY_DATA_DIR: newDataDir(), PORT: String(port) });
    t.is(run.code, 1);
    t.is(run.stderr, `gateway failed to start: 127.0.0.1:${port} is already in use (EADDRINUSE): stop what listens there, or set PORT (and HOST) to a free address\n`);
  } finally {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  }
});
