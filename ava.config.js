// AVA's configuration. The tests run on the compiled output (dist/**/*.test.js, `npm run build`);
// a source path given on the command line is run from its build, so `npx ava test/auth.e2e.test.ts`
// (or a folder such as `npx ava test/routing`) runs what `npx ava dist/test/auth.e2e.test.js` does.
// AVA loads this file before it reads its command line, so the paths are rewritten here.
import { existsSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = import.meta.dirname;

/** The build of a source test file or folder of this project, or undefined when `argument` is not one. */
function builtPath(argument) {
  const match = /^(?<path>[^*?{}[\]]+?)(?<lines>:[\d,-]+)?$/.exec(argument);
  if (!match || argument.startsWith('-')) return undefined;
  const source = relative(ROOT, resolve(match.groups.path));
  if (source.startsWith('..') || source.startsWith('dist') || source.startsWith('node_modules')) return undefined;
  if (/\.test\.ts$/.test(source)) {
    const built = join('dist', source.replace(/\.ts$/, '.js'));
    if (!existsSync(join(ROOT, built))) {
      console.error(`${argument}: its build ${built} does not exist; run npm run build first`);
      process.exit(1);
    }
    // Line numbers point into the source, not the build: the whole file runs.
    if (match.groups.lines) console.error(`${argument}: line numbers are ignored; the build of ${source} runs whole (select tests with --match)`);
    return built;
  }
  const folder = join(ROOT, source);
  if (source !== '' && existsSync(folder) && statSync(folder).isDirectory() && existsSync(join(ROOT, 'dist', source))) return join('dist', source);
  return undefined;
}

for (let index = 2; index < process.argv.length; index++) {
  const built = builtPath(process.argv[index]);
  if (built !== undefined) process.argv[index] = built;
}

export default {
  files: ['dist/**/*.test.js'],
  timeout: '60s',
  workerThreads: false,
  nodeArguments: ['--expose-gc'],
};
