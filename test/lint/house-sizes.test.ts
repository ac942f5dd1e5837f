import test from 'ava';
import { readFileSync } from 'node:fs';
import { type Oversize, oversizes, sources } from './sizes.js';

// The house rules on size (issue 32): no function in core over 100 lines, no file in core over 500
// lines, and the composition root (core/app.ts) under 200 lines, measured on the sources with the
// TypeScript compiler's syntax tree (./sizes.ts). Tests (*.test.ts) and declarations (.d.ts) are
// not counted.

/**
 * Known exceptions: none left. A name here that is no longer over its bound fails the test, so
 * the list only shrinks. `path` names a file over its bound; `path:name` a function in it.
 */
const KNOWN_OVER: readonly string[] = [];

const describe = (over: Oversize) => `${over.name} (line ${over.line}): ${over.lines} lines, over ${over.limit}`;

test('no function in core is over 100 lines, no file over 500, and core/app.ts is under 200 (but the known exceptions)', (t) => {
  const files = sources('core');
  t.true(files.length > 100, 'the walk finds core\'s sources');
  t.true(files.includes('core/app.ts'));
  const over = files.flatMap((path) => oversizes(path, readFileSync(path, 'utf8')));
  const unexpected = over.filter((entry) => !KNOWN_OVER.includes(entry.name));
  t.deepEqual(unexpected.map(describe), [], 'split these into smaller functions or modules');
  const fixed = KNOWN_OVER.filter((name) => !over.some((entry) => entry.name === name));
  t.deepEqual(fixed, [], 'no longer over their bounds: remove them from KNOWN_OVER');
});

test('the checker finds a planted function over 100 lines, with its name and lines', (t) => {
  const body = Array.from({ length: 99 }, (_, index) => `  const v${index} = ${index};`).join('\n');
  const text = `export function planted(): void {\n${body}\n}\n\nconst small = () => 1;\n`;
  t.deepEqual(oversizes('core/x/planted.ts', text), [{ name: 'core/x/planted.ts:planted', lines: 101, limit: 100, line: 1 }]);
  // 100 lines exactly is within the bound.
  const within = `export function fits(): void {\n${body.split('\n').slice(1).join('\n')}\n}\n`;
  t.deepEqual(oversizes('core/x/fits.ts', within), []);
});

test('the checker counts every function-like node: methods, constructors, accessors, arrows and nested functions', (t) => {
  const lines = (prefix: string) => Array.from({ length: 101 }, (_, index) => `${prefix}const v${index} = ${index};`).join('\n');
  const text = [
    'class Big {',
    '  constructor() {',
    lines('    '),
    '  }',
    '  get value(): number {',
    lines('    '),
    '    return 1;',
    '  }',
    '}',
    'export const arrow = () => {',
    lines('  '),
    '};',
    'export function outer() {',
    '  return [1].map(function () {',
    lines('    '),
    '  });',
    '}',
    '',
  ].join('\n');
  t.deepEqual(
    oversizes('core/x/kinds.ts', text).map((over) => over.name),
    ['core/x/kinds.ts:Big.constructor', 'core/x/kinds.ts:Big.value', 'core/x/kinds.ts:arrow', 'core/x/kinds.ts:outer', 'core/x/kinds.ts:(anonymous)'],
  );
});

test('the checker finds a planted file over 500 lines, and core/app.ts at 200', (t) => {
  const text = Array.from({ length: 501 }, (_, index) => `export const v${index} = ${index};`).join('\n') + '\n';
  t.deepEqual(oversizes('core/x/long.ts', text), [{ name: 'core/x/long.ts', lines: 501, limit: 500, line: 1 }]);
  t.deepEqual(oversizes('core/x/long.ts', text.split('\n').slice(1).join('\n')), []);
  const app = Array.from({ length: 200 }, (_, index) => `export const v${index} = ${index};`).join('\n') + '\n';
  t.deepEqual(oversizes('core/app.ts', app), [{ name: 'core/app.ts', lines: 200, limit: 199, line: 1 }]);
});
