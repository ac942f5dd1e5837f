import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { projectSources } from '../test/lint/project-sources.js';

/** The repository root (this file runs from dist/core/). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const { sources, importsOf } = projectSources(ROOT);

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
