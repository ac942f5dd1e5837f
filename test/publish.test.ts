import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';

const run = promisify(execFile);
const root = process.cwd();
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  files: string[];
  exports: Record<string, string | { types: string; default: string }>;
};

/** Test-only code by its place or name: none of it may be published. */
const TEST_ONLY = /(^|\/)(test|bench|examples)\/|-fake\b|\.test\.|__fixtures__|-conformance\./;

/**
 * Builds the package as `prepack` does (tsconfig.build.json) into a staging folder, then asks npm
 * what `npm pack` would publish from it (scripts off: the build is done, and the working `dist/`
 * the other tests run from is left alone).
 */
async function publishedFiles(): Promise<string[]> {
  const stage = mkdtempSync(join(tmpdir(), 'gateway-pack-'));
  try {
    await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', join(stage, 'dist')], { cwd: root });
    cpSync(join(root, 'package.json'), join(stage, 'package.json'));
    cpSync(join(root, 'README.md'), join(stage, 'README.md'));
    cpSync(join(root, 'bin'), join(stage, 'bin'), { recursive: true });
    cpSync(join(root, 'core/dashboard/public'), join(stage, 'core/dashboard/public'), { recursive: true });
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: stage, maxBuffer: 16 * 1024 * 1024 });
    const [pack] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
    return pack.files.map((file) => file.path);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

test('prepack builds the publish configuration into a clean dist/', (t) => {
  t.regex(packageJson.scripts.prepack, /rmSync\('dist'.*&& tsc -p tsconfig\.build\.json$/);
  t.is(packageJson.scripts.build, 'tsc -p tsconfig.json', 'the normal build still compiles the tests');
});

test('the published package holds the runtime, the conformance kit and every export, and no test code', async (t) => {
  t.timeout(240_000);
  const files = await publishedFiles();
  t.deepEqual(
    files.filter((path) => TEST_ONLY.test(path)),
    [],
  );
  for (const path of ['dist/core/main.js', 'dist/core/conformance/index.js', 'dist/core/conformance/index.d.ts', 'dist/core/conformance/cli.js', 'dist/gateway.config.js', 'core/dashboard/public/index.html']) {
    t.true(files.includes(path), `${path} is published`);
  }
  for (const [name, target] of Object.entries(packageJson.exports)) {
    // A pattern export (`./providers/*`, `./sinks/*`) is checked with every shipped plugin folder of its kind.
    const folders = (path: string) => {
      const kind = /^\.\/dist\/plugins\/([^/]+)\/\*\//.exec(path)?.[1];
      return [...new Set(files.map((file) => new RegExp(`^dist/plugins/${kind}/([^/]+)/index\\.js$`).exec(file)?.[1]).filter((id) => id !== undefined))];
    };
    const paths = (typeof target === 'string' ? [target] : [target.types, target.default]).flatMap((path) => (path.includes('*') ? folders(path).map((id) => path.replace('*', id)) : [path]));
    for (const path of paths) t.true(files.includes(path.replace(/^\.\//, '')), `export ${name}: ${path}`);
  }
  t.true(files.includes('bin/llm-gateway.js'), 'the command is published');
  t.true(files.some((path) => path.startsWith('dist/plugins/providers/bedrock/')), 'the provider plugins are published');
});

test('llm-gateway/conformance resolves, through the package exports, to the kit', async (t) => {
  // A specifier in a variable: resolved by Node at run time, as an integrator's import is.
  const specifier = 'llm-gateway/conformance';
  const kit = (await import(specifier)) as Record<string, unknown>;
  for (const name of ['runConformance', 'formatReport', 'startScenarioServer', 'subjectsOf', 'requestJson']) t.is(typeof kit[name], 'function', name);
  t.true(Array.isArray(kit.CHECKS));
});

test('the package is installable: not private, a bin, engines >=24, a typed export for every documented entry', (t) => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { private?: boolean; bin: Record<string, string>; engines: { node: string } };
  t.not(manifest.private, true);
  t.deepEqual(manifest.bin, { 'llm-gateway': 'bin/llm-gateway.js' });
  t.is(manifest.engines.node, '>=24');
  for (const entry of ['.', './guardrails', './spec', './conformance', './providers/*']) {
    const target = packageJson.exports[entry];
    t.true(typeof target === 'object' && target.types.endsWith('.d.ts'), `${entry} is typed`);
  }
});

test('llm-gateway/providers/* resolves any shipped provider through the package exports', async (t) => {
  for (const [specifier, name] of [
    ['llm-gateway/providers/anthropic', 'anthropic'],
    ['llm-gateway/providers/openai-compatible', 'defineCompatibleProvider'],
  ] as const) {
    const loaded = (await import(specifier)) as Record<string, unknown>;
    t.is(typeof loaded[name], 'function', specifier);
  }
});

test('llm-gateway/provider and llm-gateway/guardrail resolve to the toolkits of their audience', async (t) => {
  for (const entry of ['./provider', './guardrail']) {
    const target = packageJson.exports[entry];
    t.true(typeof target === 'object' && target.types.endsWith('.d.ts'), `${entry} is typed`);
  }
  const providerSpecifier = 'llm-gateway/provider';
  const provider = (await import(providerSpecifier)) as Record<string, unknown>;
  for (const name of ['NdjsonDecoder', 'SseDecoder', 'chatChunks', 'tokenUsage', 'contentText', 'stopList', 'errorBody', 'readErrorReply', 'completionId', 'nowSeconds', 'parseEventData', 'errors', 'requestJson']) {
    t.true(typeof provider[name] === 'function' || typeof provider[name] === 'object', `llm-gateway/provider exports ${name}`);
  }
  t.is(provider.SPECIFICATION_VERSION, 'v1');
  const guardrailSpecifier = 'llm-gateway/guardrail';
  const guardrail = (await import(guardrailSpecifier)) as Record<string, unknown>;
  for (const name of ['defineGuardrail', 'findSpans', 'replaceSpans', 'step', 'errors']) t.true(typeof guardrail[name] === 'function' || typeof guardrail[name] === 'object', `llm-gateway/guardrail exports ${name}`);
  t.is(guardrail.ALLOW !== undefined && (guardrail.ALLOW as { action: string }).action, 'allow');
  // The compatibility entry keeps exporting what it did, the moved helpers included.
  const specSpecifier = 'llm-gateway/spec';
  const spec = (await import(specSpecifier)) as Record<string, unknown>;
  for (const name of ['defineGuardrail', 'SseDecoder', 'parseRoute', 'BootError', 'NdjsonDecoder', 'contentText']) t.is(typeof spec[name], 'function', `llm-gateway/spec exports ${name}`);
});
