import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';

const run = promisify(execFile);
const AVA = join(process.cwd(), 'node_modules/ava/entrypoints/cli.mjs');

/** `npx ava <args>`, as docs/testing.md says to run one test file, to its end. */
async function ava(args: string[]): Promise<{ code: number; output: string }> {
  return run(process.execPath, [AVA, ...args], { cwd: process.cwd(), env: { ...process.env, CI: '1' } }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
  );
}

test('npx ava runs one test file named by its source path (test/….test.ts) from its build, as by its dist path', async (t) => {
  t.timeout(120_000);
  const match = ['--match', 'docs/errors.md is generated*'];
  for (const file of ['test/docs/error-catalogue.test.ts', 'dist/test/docs/error-catalogue.test.js', join(process.cwd(), 'test/docs/error-catalogue.test.ts')]) {
    const { code, output } = await ava([file, ...match]);
    t.is(code, 0, `${file}: ${output}`);
    t.regex(output, /1 test passed/, file);
    t.notRegex(output, /ERR_MODULE_NOT_FOUND|uncaught exception/i, file);
  }
  const missing = await ava(['test/docs/no-such.test.ts']);
  t.not(missing.code, 0);
  t.regex(missing.output, /dist\/test\/docs\/no-such\.test\.js does not exist; run npm run build first/);
});
