import { readFileSync } from 'node:fs';
import test from 'ava';
import { documentedMatrix, MATRIX_END, MATRIX_START } from './matrix.js';

test('the permission matrix in docs/organizations.md is the one the routes declare (npm run docs:permissions rewrites it)', async (t) => {
  const text = readFileSync(new URL('../../../docs/organizations.md', import.meta.url), 'utf8');
  const documented = text.slice(text.indexOf(MATRIX_START) + MATRIX_START.length, text.indexOf(MATRIX_END)).trim();
  t.is(documented, await documentedMatrix());
});
