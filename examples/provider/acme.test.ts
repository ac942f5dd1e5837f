import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { ChatRequest } from '../../core/spec/index.js';
import { startGateway } from '../../test/harness.js';
import { runConformance } from '../../core/conformance/index.js';
import { DEFAULT_LIMIT, toAcmeRequest } from './acme-chat.js';
import { conformance } from './acme-conformance.js';
import exampleConfig from './gateway.config.js';

const root = process.cwd();

test('the worked example passes the conformance kit', async (t) => {
  const report = await runConformance(conformance);
  t.true(report.passed, JSON.stringify(report.results.filter((result) => result.outcome === 'fail')));
  const skipped = report.results.filter((result) => result.outcome === 'skip').map((result) => result.name);
  t.deepEqual(skipped, ['chat.n', 'embeddings', 'rerank', 'images', 'speech', 'transcription'], 'only what Acme declares it lacks is skipped');
});

test("the guide's conformance command runs the compiled example and prints a passing table", (t) => {
  // `npm run conformance -- --module …` is `npm run build` followed by exactly this.
  const run = spawnSync(process.execPath, ['dist/core/conformance/cli.js', '--module', 'dist/examples/provider/acme-conformance.js'], { cwd: root, encoding: 'utf8', timeout: 30_000 });
  t.is(run.status, 0, run.stderr);
  t.regex(run.stdout, /^conformance: acme \(Acme LLM\)$/m);
  t.regex(run.stdout, /^tools\.stream\s+PASS$/m);
  t.regex(run.stdout, /22 passed, 0 failed, 6 skipped: CONFORMS/);
  const guide = readFileSync(join(root, 'docs/writing-a-provider.md'), 'utf8');
  const printed = /prints \(the build's output first\):\n\n```\n([\s\S]*?)```/.exec(guide)?.[1];
  t.is(printed?.trim(), run.stdout.trim(), 'the table in the guide is what the command prints');
});

test("the example's configuration boots and lists acme with its operations", async (t) => {
  const gateway = await startGateway({ providers: exampleConfig.providers });
  try {
    const listed = gateway.gateway.registry.list().providers.find((provider) => provider.id === 'acme');
    t.like(listed, { id: 'acme', kind: 'provider', version: '0.1.0', operations: ['chat'] });
  } finally {
    await gateway.close();
  }
});

test('the request mapping: system gathered, turns renamed, limit filled, stop and tools carried', (t) => {
  const request: ChatRequest = {
    model: 'acme-small',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', content: 'sunny', tool_call_id: 'c1' },
    ],
    stop: 'END',
    tools: [{ type: 'function', function: { name: 'w', description: 'weather', parameters: { type: 'object' } } }],
  };
  t.deepEqual(toAcmeRequest(request), {
    model: 'acme-small',
    system: 'Be brief.',
    turns: [
      { speaker: 'user', text: 'Weather?' },
      { speaker: 'model', text: '', calls: [{ id: 'c1', name: 'w', input: { city: 'Oslo' } }] },
      { speaker: 'tool', text: 'sunny', call_id: 'c1' },
    ],
    limit: DEFAULT_LIMIT,
    stop_at: ['END'],
    tools: [{ name: 'w', about: 'weather', schema: { type: 'object' } }],
  });
  t.is(toAcmeRequest({ ...request, max_tokens: 50 }).limit, 50);
});

test('the guide shows every file of the example exactly as it is', (t) => {
  const guide = readFileSync(join(root, 'docs/writing-a-provider.md'), 'utf8');
  const shown = [...guide.matchAll(/<!-- file: (\S+) -->\n```ts\n([\s\S]*?)```\n/g)];
  const files = shown.map((match) => match[1]);
  t.deepEqual(files.sort(), ['examples/provider/acme-chat.ts', 'examples/provider/acme-conformance.ts', 'examples/provider/acme-error.ts', 'examples/provider/acme-fake.ts', 'examples/provider/gateway.config.ts', 'examples/provider/index.ts']);
  for (const [, path, code] of shown) t.is(code, readFileSync(join(root, path), 'utf8'), `${path} differs from the guide`);
});

/**
 * The provider folders under `<tree>/plugins/providers`, found by convention rather than listed: a
 * folder with a conformance subject (`<folder>-conformance.ts`) is a provider; a provider whose
 * `index.ts` is a compatible manifest (`defineCompatibleProvider(`) is nothing else, so the layout
 * does not apply to it; the other providers are native; a folder without a subject is a shared base
 * the providers build on.
 */
export function providerFolders(tree: string): { native: string[]; compatible: string[]; bases: string[] } {
  const base = join(tree, 'plugins/providers');
  const folders = readdirSync(base).filter((name) => statSync(join(base, name)).isDirectory()).sort();
  const isProvider = (folder: string) => existsSync(join(base, folder, `${folder}-conformance.ts`));
  const isCompatible = (folder: string) => existsSync(join(base, folder, 'index.ts')) && readFileSync(join(base, folder, 'index.ts'), 'utf8').includes('defineCompatibleProvider(');
  return {
    native: folders.filter((folder) => isProvider(folder) && !isCompatible(folder)),
    compatible: folders.filter((folder) => isProvider(folder) && isCompatible(folder)),
    bases: folders.filter((folder) => !isProvider(folder)),
  };
}

/** The native providers, and the shared bases they build on, that the guide's layout describes. */
const { native: NATIVE_PROVIDERS, bases: SHARED_BASES } = providerFolders(root);
const LAYOUT_KINDS = ['index.ts', '*.ts', '*.test.ts', '__fixtures__/', '<id>-fake.ts', '<id>-conformance.ts', '<id>.e2e.test.ts', '<id>.ops.e2e.test.ts'];
const REQUIRED_KINDS = ['index.ts', '__fixtures__/', '<id>-fake.ts', '<id>-conformance.ts'];

/** The file kinds the guide's layout block lists (its first column). */
function guideLayoutKinds(): string[] {
  const guide = readFileSync(join(root, 'docs/writing-a-provider.md'), 'utf8');
  const block = /## 3\. Folder layout[\s\S]*?```\nplugins\/providers\/<id>\/\n([\s\S]*?)```/.exec(guide)?.[1] ?? '';
  return block
    .split('\n')
    .filter(Boolean)
    .map((line) => line.trim().split(/\s+/)[0]);
}

/** Folder entries that are scaffolding (fake, subject, end-to-end test), by the name pattern that gives them away. */
const scaffolding = (folder: string, tree = root) => readdirSync(join(tree, 'plugins/providers', folder)).filter((name) => /-fake|fake-|-conformance|\.e2e\./.test(name));

/** What breaks the layout among the providers and bases found in `tree` (empty when none). */
function layoutProblems(tree: string): string[] {
  const { native, bases } = providerFolders(tree);
  const problems: string[] = [];
  for (const id of native) {
    const folder = join(tree, 'plugins/providers', id);
    for (const kind of REQUIRED_KINDS) if (!existsSync(join(folder, kind.replace('<id>', id)))) problems.push(`plugins/providers/${id}/ has no ${kind.replace('<id>', id)}`);
    if (existsSync(join(folder, '__fixtures__')) && !statSync(join(folder, '__fixtures__')).isDirectory()) problems.push(`${id}: __fixtures__ is not a folder`);
    const allowed = [`${id}-fake.ts`, `${id}-conformance.ts`, `${id}.e2e.test.ts`, `${id}.ops.e2e.test.ts`];
    for (const name of scaffolding(id, tree).filter((name) => !allowed.includes(name))) problems.push(`${id}: ${name} is not named as the layout says (one fake, one subject, end-to-end tests)`);
  }
  for (const base of bases) {
    const fakes = scaffolding(base, tree);
    if (fakes.length !== 1 || fakes[0] !== `${base}-fake.ts`) problems.push(`${base}: its one fake is not ${base}-fake.ts (${fakes.join(', ')})`);
  }
  return problems;
}

test("the guide's folder layout lists exactly the file kinds every native provider folder follows", (t) => {
  t.deepEqual(guideLayoutKinds(), LAYOUT_KINDS);
  t.true(NATIVE_PROVIDERS.length > 0 && SHARED_BASES.length > 0, `found native ${NATIVE_PROVIDERS.join(', ')}; bases ${SHARED_BASES.join(', ')}`);
  t.deepEqual(layoutProblems(root), []);
});

test('the layout check finds a new native provider by itself and fails it when it breaks the layout', (t) => {
  const tree = mkdtempSync(join(tmpdir(), 'provider-layout-'));
  try {
    const folder = (name: string, files: Record<string, string>) => {
      mkdirSync(join(tree, 'plugins/providers', name), { recursive: true });
      for (const [file, text] of Object.entries(files)) writeFileSync(join(tree, 'plugins/providers', name, file), text);
    };
    folder('zeta', { 'index.ts': 'export const zeta = 1;\n', 'zeta-conformance.ts': '', 'zeta-fake.ts': '', 'zeta-mock.e2e.test.ts': '' });
    folder('eta', { 'index.ts': "export const eta = defineCompatibleProvider(manifest);\n", 'eta-conformance.ts': '' });
    folder('theta-shared', { 'index.ts': '', 'theta-shared-fake.ts': '' });
    t.deepEqual(providerFolders(tree), { native: ['zeta'], compatible: ['eta'], bases: ['theta-shared'] });
    t.deepEqual(layoutProblems(tree), [
      'plugins/providers/zeta/ has no __fixtures__/',
      'zeta: zeta-mock.e2e.test.ts is not named as the layout says (one fake, one subject, end-to-end tests)',
    ]);
    mkdirSync(join(tree, 'plugins/providers/zeta/__fixtures__'));
    rmSync(join(tree, 'plugins/providers/zeta/zeta-mock.e2e.test.ts'));
    t.deepEqual(layoutProblems(tree), []);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
});

test('no provider-specific fake or end-to-end test is left outside its provider folder', (t) => {
  // Each found provider and base, and the first word of a hyphenated one (`azure`, `google`, …).
  const ids = [...new Set([...NATIVE_PROVIDERS, ...SHARED_BASES].flatMap((id) => [id, id.split('-')[0]]))];
  const outside = [...readdirSync(join(root, 'test')).map((name) => `test/${name}`), ...readdirSync(join(root, 'test/fakes')).map((name) => `test/fakes/${name}`)];
  const stray = outside.filter((path) => ids.some((id) => path.endsWith(`/${id}.e2e.test.ts`) || path.endsWith(`/${id}.ops.e2e.test.ts`) || (id !== 'openai' && path.startsWith(`test/fakes/${id}`))));
  t.deepEqual(stray, []);
});
