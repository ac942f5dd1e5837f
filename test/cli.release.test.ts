import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { PROVIDER_KEY } from './harness.js';

const run = promisify(execFile);
const root = process.cwd();
const ACCOUNT_KEY = 'gw-release-test-account-key-0123456789';

/**
 * An operator's own `gateway.config.ts` in their own project: it imports the installed package
 * (its config helper, a shipped provider and the compatible-provider toolkit) and adds a provider
 * of its own, pointing at `FAKE_BASE_URL`.
 */
const OPERATOR_CONFIG = `import { defineConfig } from 'llm-gateway';
import { openai } from 'llm-gateway/providers/openai';
import { defineCompatibleProvider, type CompatibleProviderManifest } from 'llm-gateway/providers/openai-compatible';

const inHouse: CompatibleProviderManifest = {
  id: 'in-house',
  name: 'In-house models',
  description: 'Our own OpenAI-compatible model server.',
  baseUrl: process.env.FAKE_BASE_URL ?? 'http://127.0.0.1:9/v1',
  operations: ['chat'],
  auth: { kind: 'bearer' },
};

export default defineConfig({ providers: [openai(), defineCompatibleProvider(inHouse)()] });
`;

/** The operator's own provider in a module of its own, which the config below imports. */
const IN_HOUSE_MODULE = `import { defineCompatibleProvider, type CompatibleProviderManifest } from 'llm-gateway/providers/openai-compatible';

const manifest: CompatibleProviderManifest = {
  id: 'in-house', name: 'In-house models', description: 'Our own model server.',
  baseUrl: process.env.FAKE_BASE_URL ?? 'http://127.0.0.1:9/v1', operations: ['chat'], auth: { kind: 'bearer' },
};
export const inHouse = defineCompatibleProvider(manifest);
`;
const SPLIT_CONFIG = `import { defineConfig } from 'llm-gateway';
import { openai } from 'llm-gateway/providers/openai';
import { inHouse } from './in-house.ts';

export default defineConfig({ providers: [openai(), inHouse()] });
`;

/** Starts the installed command (in `cwd`, the operator's folder), resolving with the URL it listens on. */
function startInstalled(bin: string, args: string[], environment: Record<string, string>, cwd?: string): { child: ChildProcess; ready: Promise<string>; output: () => string } {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', NODE_ENV: 'production', GATEWAY_API_KEY: ACCOUNT_KEY, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /gateway listening on (http:\/\/\S+)/.exec(output);
      if (match && output.includes('dashboard:')) resolve(match[1]);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
  return { child, ready, output: () => output };
}

const dockerfile = (): string => readFileSync(join(root, 'Dockerfile'), 'utf8');

/** The exec form of the Dockerfile's HEALTHCHECK command. */
function dockerHealthcheck(): string[] {
  const match = /^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$/m.exec(dockerfile());
  if (!match) throw new Error('the Dockerfile has no HEALTHCHECK … CMD [ … ]');
  return JSON.parse(match[1]) as string[];
}

test('the Dockerfile builds with build-release.sh on Node 24 slim and runs it as a non-root user, with a health check, a data volume and SIGTERM', (t) => {
  const text = dockerfile();
  const stages = [...text.matchAll(/^FROM (\S+)/gm)].map((match) => match[1]);
  t.deepEqual(stages, ['node:24-slim', 'node:24-slim'], 'two stages on Node 24 slim');
  t.regex(text, /^RUN scripts\/build-release\.sh \/app$/m);
  t.regex(text, /^COPY --from=build \/app \/app$/m);
  t.regex(text, /^USER node$/m);
  t.regex(text, /^VOLUME \["\/data"\]$/m);
  t.regex(text, /GATEWAY_DATA_DIR=\/data/);
  t.regex(text, /^STOPSIGNAL SIGTERM$/m);
  t.true(dockerHealthcheck().join(' ').includes('/health'));
  t.regex(text, /^ENTRYPOINT \["node", "--max-semi-space-size=16", "--no-parallel-scavenge", "\/app\/node_modules\/llm-gateway\/bin\/llm-gateway\.js"\]$/m);
  t.truthy(statSync(join(root, 'scripts/build-release.sh')).mode & 0o100, 'the script is executable');

  const compose = readFileSync(join(root, 'compose.yaml'), 'utf8');
  for (const service of ['gateway-1', 'gateway-2', 'redis', 'postgres']) t.regex(compose, new RegExp(`^  ${service}:$`, 'm'), service);
  t.regex(compose, /REDIS_URL: redis:\/\/redis:6379/);
  t.regex(compose, /DATABASE_URL: postgres:\/\/gateway:/);
});

let fake: Fake;
test.before(async () => {
  fake = await startFake();
});
test.after.always(async () => {
  await fake?.close();
});

test('build-release packs the package and installs it offline without dev dependencies; the installed command serves an operator config with its own provider, also in a folder made by npm init -y (commonjs) and in one with no package.json', async (t) => {
  t.timeout(150_000);
  const project = mkdtempSync(join(tmpdir(), 'gateway-release-'));
  try {
    // npm_config_offline: npm's cache only; a dependency missing from it fails the install with
    // ENOTCACHED (and the script says so) instead of reaching the network.
    const built = await run(join(root, 'scripts/build-release.sh'), [project], { cwd: root, env: { ...process.env, npm_config_offline: 'true' }, maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: { stderr?: string; message: string }) => {
        throw new Error(`build-release failed: ${error.stderr ?? error.message}`);
      },
    );
    t.regex(built.stderr, /installed: /);
    const installed = join(project, 'node_modules/llm-gateway');
    t.true(existsSync(join(installed, 'dist/core/main.js')));
    t.false(existsSync(join(installed, 'dist/test')), 'no tests are shipped');
    t.false(existsSync(join(project, 'node_modules/typescript')), 'no dev dependency is installed');
    t.false(existsSync(join(project, 'node_modules/node')), 'the node dev dependency is not installed: production brings its own Node 24');
    const bin = join(project, 'node_modules/.bin/llm-gateway');
    t.true(existsSync(bin));
    t.truthy(statSync(bin).mode & 0o111, 'the command is executable');
    const help = await run(bin, ['doctor', '--help'], { env: { PATH: process.env.PATH ?? '' } });
    t.regex(help.stdout, /^usage: llm-gateway doctor/, 'it runs as a command (its shebang)');
    const typed = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { exports: Record<string, { types: string }> };
    t.true(existsSync(join(installed, typed.exports['./guardrails'].types)), 'the exports are typed');

    writeFileSync(join(project, 'gateway.config.ts'), OPERATOR_CONFIG);
    const gateway = startInstalled(join(installed, 'bin/llm-gateway.js'), ['start', '--config', join(project, 'gateway.config.ts')], {
      GATEWAY_DATA_DIR: join(project, 'data'),
      FAKE_BASE_URL: fake.baseUrl,
    });
    try {
      const url = await gateway.ready;
      t.regex(gateway.output(), /in-house/, 'the banner lists the operator provider');
      const health = await fetch(`${url}/health`);
      t.is(health.status, 200);
      // The image's HEALTHCHECK, run as Docker would (its PORT is the container's).
      const [command, ...healthArgs] = dockerHealthcheck();
      t.is(command, 'node');
      const probe = await run(process.execPath, healthArgs, { env: { PATH: process.env.PATH ?? '', PORT: new URL(url).port } }).then(() => 0, (error: { code?: number }) => error.code ?? 1);
      t.is(probe, 0, 'the container health check passes');
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'in-house', authorization: `Bearer ${PROVIDER_KEY}` },
        body: JSON.stringify({ model: 'house-model', messages: [{ role: 'user', content: 'hello' }] }),
      });
      const text = await response.text();
      t.is(response.status, 200, text);
      t.is((JSON.parse(text) as { object: string }).object, 'chat.completion');
      t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${PROVIDER_KEY}`);
      t.is(fake.requests.at(-1)?.url, '/v1/chat/completions');
    } finally {
      const exited = once(gateway.child, 'exit');
      gateway.child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      t.is(code, 0, 'SIGTERM shuts it down cleanly');
    }

    // The recipe of docs/deployment.md in a folder made by `npm init -y` ("type": "commonjs"), its
    // provider in a file of its own beside the config, and in a folder with no package.json at all
    // (a JavaScript config): both start, with no warning about the module type.
    const commonjs = join(project, 'made-by-npm-init');
    mkdirSync(commonjs);
    await run('npm', ['init', '-y'], { cwd: commonjs, env: { ...process.env, npm_config_offline: 'true' } });
    t.is((JSON.parse(readFileSync(join(commonjs, 'package.json'), 'utf8')) as { type?: string }).type ?? 'commonjs', 'commonjs');
    writeFileSync(join(commonjs, 'in-house.ts'), IN_HOUSE_MODULE);
    writeFileSync(join(commonjs, 'gateway.config.ts'), SPLIT_CONFIG);
    // A package.json without "type" (Node would reparse the file as a module, with a warning).
    const typeless = join(project, 'typeless');
    mkdirSync(typeless);
    writeFileSync(join(typeless, 'package.json'), '{"name": "typeless", "version": "1.0.0"}\n');
    writeFileSync(join(typeless, 'gateway.config.ts'), OPERATOR_CONFIG);
    const bare = mkdtempSync(join(tmpdir(), 'gateway-no-package-json-'));
    try {
      symlinkSync(join(project, 'node_modules'), join(bare, 'node_modules'));
      writeFileSync(join(bare, 'gateway.config.js'), OPERATOR_CONFIG.replace(': CompatibleProviderManifest', '').replace(', type CompatibleProviderManifest', ''));
      for (const [folder, file] of [
        [commonjs, 'gateway.config.ts'],
        [typeless, 'gateway.config.ts'],
        [bare, 'gateway.config.js'],
      ]) {
        const started = startInstalled(join(installed, 'bin/llm-gateway.js'), ['start', '--config', file], { GATEWAY_DATA_DIR: join(folder, 'data'), FAKE_BASE_URL: fake.baseUrl }, folder);
        try {
          const url = await started.ready;
          t.regex(started.output(), /in-house/, `${folder}: the banner lists the operator provider`);
          t.notRegex(started.output(), /warning|MODULE_TYPELESS/i, `${folder}: no warning`);
          const response = await fetch(`${url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'in-house', authorization: `Bearer ${PROVIDER_KEY}` },
            body: JSON.stringify({ model: 'house-model', messages: [{ role: 'user', content: 'hello' }] }),
          });
          t.is(response.status, 200, `${folder}: ${await response.text()}`);
        } finally {
          if (started.child.exitCode === null && started.child.signalCode === null) {
            const exited = once(started.child, 'exit');
            started.child.kill('SIGTERM');
            await exited;
          }
        }
      }
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
});
