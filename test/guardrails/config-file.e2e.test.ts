import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY } from '../harness.js';
import { answering } from './helpers.js';

/**
 * An integrator's project outside this repository: its own package.json, the gateway installed as
 * the `llm-gateway` dependency (here a symlink to this checkout, as `npm link` or a file: dependency
 * makes it) and its own config file importing the package's public exports.
 */
function integratorProject(fileName: string, source: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'gateway-user-config-'));
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'my-gateway', private: true, type: 'module' }));
  mkdirSync(join(folder, 'node_modules'));
  symlinkSync(process.cwd(), join(folder, 'node_modules', 'llm-gateway'), 'dir');
  const path = join(folder, fileName);
  writeFileSync(path, source);
  return path;
}

function startCli(configPath: string): { child: ChildProcess; ready: Promise<string>; exited: Promise<{ code: number | null; output: string }> } {
  const child = spawn(process.execPath, ['dist/core/main.js', 'start'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      GATEWAY_API_KEY: ACCOUNT_KEY,
      GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-data-')),
      GATEWAY_CONFIG: configPath,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; output: string }>((resolve) => child.once('exit', (code) => resolve({ code, output })));
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /gateway listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then(({ code }) => reject(new Error(`exited with ${code}: ${output}`)));
  });
  ready.catch(() => {}); // tests that expect an exit await `exited` instead
  return { child, ready, exited };
}

let fake: Fake;
test.before(async () => {
  fake = await startFake(answering('from the fake'));
});
test.after.always(() => fake?.close());

const chat = (url: string, content: string) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': ACCOUNT_KEY,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': fake.baseUrl,
      authorization: `Bearer ${PROVIDER_KEY}`,
    },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content }] }),
  });

test.serial('GATEWAY_CONFIG starts the gateway with a TypeScript config outside the repository, no build step', async (t) => {
  const path = integratorProject(
    'gateway.config.ts',
    `import { defineConfig, type GatewayConfig } from 'llm-gateway';
import { bannedWords, pii, type PolicyDefinition } from 'llm-gateway/guardrails';
import { openai } from 'llm-gateway/providers/openai';

const words: string[] = ['classified'];
const mine: PolicyDefinition = { input: [bannedWords({ words }), pii({ action: 'redact' })] };
const config: GatewayConfig = defineConfig({ providers: [openai()], policies: { mine }, defaultPolicy: 'mine' });
export default config;
`,
  );
  const cli = startCli(path);
  t.teardown(() => cli.child.kill('SIGKILL'));
  const url = await cli.ready;
  const denied = await chat(url, 'this is classified');
  t.is(denied.status, 400);
  t.like(await denied.json(), { error: { code: 'guardrail_denied' } });
  const allowed = await chat(url, 'mail me at a@b.io');
  t.is(allowed.status, 200);
  t.is(fake.requests.at(-1)!.json().messages[0].content, 'mail me at [REDACTED_EMAIL]');
});

test.serial('GATEWAY_CONFIG also takes a JavaScript file', async (t) => {
  const path = integratorProject(
    'gateway.config.mjs',
    `import { defineConfig } from 'llm-gateway';
import { regex } from 'llm-gateway/guardrails';
import { openai } from 'llm-gateway/providers/openai';
export default defineConfig({ providers: [openai()], policies: { js: { input: [regex({ pattern: 'nope' })] } }, defaultPolicy: 'js' });
`,
  );
  const cli = startCli(path);
  t.teardown(() => cli.child.kill('SIGKILL'));
  const url = await cli.ready;
  t.is((await chat(url, 'nope')).status, 400);
  t.is((await chat(url, 'yes')).status, 200);
});

test.serial('a wrong param in the user config fails start-up with a message naming policy, guardrail and field', async (t) => {
  const path = integratorProject(
    'gateway.config.ts',
    `import { defineConfig } from 'llm-gateway';
import { maxTokens } from 'llm-gateway/guardrails';
import { openai } from 'llm-gateway/providers/openai';
export default defineConfig({ providers: [openai()], policies: { capped: { input: [maxTokens({ max: -5 })] } } });
`,
  );
  const cli = startCli(path);
  const { code, output } = await cli.exited;
  t.is(code, 1);
  t.regex(output, /gateway failed to start: INVALID_PARAMS: policy "capped", input guardrail #1 "max-tokens": \/max must be >= 1/);
});

test.serial('a GATEWAY_CONFIG that does not exist fails start-up clearly', async (t) => {
  const { code, output } = await startCli(join(tmpdir(), 'no-such-gateway-config.ts')).exited;
  t.is(code, 1);
  t.regex(output, /INVALID_CONFIG: GATEWAY_CONFIG=.*no-such-gateway-config\.ts could not be loaded/);
});
