import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { openai } from '../plugins/providers/openai/index.js';
import { createGateway } from './app.js';

/** The repository root (this file runs from dist/core/). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const source = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Where the subsystems assemble themselves, each in its own folder. */
const SUBSYSTEMS = ['vault', 'logs', 'routing', 'cache', 'api/protocols', 'admin', 'dashboard', 'telemetry', 'cluster'];

test('core/app.ts wires the subsystems: under 200 lines, no top-level function over 100, no tokens, every subsystem assembled in its own folder', (t) => {
  const app = source('core/app.ts');
  const lines = app.split('\n');
  t.true(lines.length < 200, `core/app.ts has ${lines.length} lines`);
  let start: { name: string; line: number } | undefined;
  lines.forEach((line, index) => {
    const opened = /^(?:export )?(?:async )?function (\w+)/.exec(line);
    if (opened) start = { name: opened[1], line: index };
    else if (line === '}' && start) {
      t.true(index - start.line + 1 <= 100, `${start.name} has ${index - start.line + 1} lines`);
      start = undefined;
    }
  });
  t.false(/\bSymbol\(/.test(app), 'core/app.ts declares tokens');
  t.false(/\.resolve</.test(app), 'core/app.ts restates the type of what it resolves');
  for (const folder of SUBSYSTEMS) t.regex(app, new RegExp(`from '\\./${folder}/assemble\\.js'`), `core/app.ts does not take ${folder}'s parts from core/${folder}/assemble.ts`);
});

test('only the assembly modules register parts in a container', (t) => {
  const files = readdirSync(join(ROOT, 'core'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts'));
  const registering = files.filter((file) => /\bprovide\(container,|container\.register\(/.test(source(join('core', file))));
  for (const file of registering) t.true(file.endsWith('/assemble.ts') || ['app.ts', 'container.ts', 'plugins.ts'].includes(file), `core/${file} registers parts`);
  t.true(registering.length >= SUBSYSTEMS.length - 1, 'the subsystems register their parts');
});

test('each gateway has a container of its own: two gateways in one process share no part', async (t) => {
  const environment = () => ({ GATEWAY_API_KEY: 'gw-root-test-key-0123456789abcdef', GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-root-test-')) });
  const sink = { write: () => {} };
  const first = createGateway({ providers: [openai()] }, { environment: environment(), logDestination: sink });
  const second = createGateway({ providers: [openai()] }, { environment: environment(), logDestination: sink });
  t.teardown(async () => {
    await first.close();
    await second.close();
  });
  for (const part of ['registry', 'pipeline', 'policies', 'adminGuard', 'vault', 'logStore', 'metrics', 'memoryBudget', 'cache'] as const) {
    t.truthy(first[part], part);
    t.not(first[part], second[part], `${part} is shared`);
  }
});
