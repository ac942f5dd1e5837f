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
    for (const path of typeof target === 'string' ? [target] : [target.types, target.default]) t.true(files.includes(path.replace(/^\.\//, '')), `export ${name}: ${path}`);
  }
  t.true(files.some((path) => path.startsWith('dist/plugins/providers/bedrock/')), 'the provider plugins are published');
});

test('llm-gateway/conformance resolves, through the package exports, to the kit', async (t) => {
  // A specifier in a variable: resolved by Node at run time, as an integrator's import is.
  const specifier = 'llm-gateway/conformance';
  const kit = (await import(specifier)) as Record<string, unknown>;
  for (const name of ['runConformance', 'formatReport', 'startScenarioServer', 'subjectsOf', 'requestJson']) t.is(typeof kit[name], 'function', name);
  t.true(Array.isArray(kit.CHECKS));
});
