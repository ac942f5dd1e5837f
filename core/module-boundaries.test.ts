import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';

/** The repository root (this file runs from dist/core/). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The TypeScript sources (tests left out) under `folder`, relative to the root. */
function sources(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts'))
    .map((name) => join(folder, name));
}

/** The project files `file` imports (relative specifiers, `.js` read as the `.ts` source). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/g)]
    .map((match) => relative(ROOT, resolve(ROOT, dirname(file), match[1])).replace(/\.js$/, '.ts'))
    .filter((target) => existsSync(join(ROOT, target)));
}

test('config imports only the contract (core/spec), and nothing the contract reaches imports config', (t) => {
  for (const file of sources('config')) {
    for (const target of importsOf(file).filter((target) => target.startsWith('core/'))) t.is(target, 'core/spec/index.ts', `${file} imports ${target}`);
  }
  const reached = new Set<string>();
  const pending = ['core/spec/index.ts'];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (reached.has(file)) continue;
    reached.add(file);
    pending.push(...importsOf(file));
  }
  t.deepEqual([...reached].filter((file) => file.startsWith('config/')), []);
});

test('the vault imports neither the admin API nor the command line: both are front doors onto it', (t) => {
  for (const file of sources('core/vault')) {
    t.deepEqual(importsOf(file).filter((target) => target.startsWith('core/admin/') || target.startsWith('core/cli/')), [], file);
  }
});
