// Rewrites the permission matrix in docs/organizations.md from the admin routes' declarations
// (`npm run docs:permissions`); test/org/permission-matrix.test.ts fails when the doc is behind.
import { readFileSync, writeFileSync } from 'node:fs';
import { documentedMatrix, MATRIX_END, MATRIX_START } from '../dist/test/org/matrix.js';

const path = new URL('../docs/organizations.md', import.meta.url);
const text = readFileSync(path, 'utf8');
const start = text.indexOf(MATRIX_START);
const end = text.indexOf(MATRIX_END);
if (start < 0 || end < 0) throw new Error('docs/organizations.md lacks the matrix markers');
writeFileSync(path, `${text.slice(0, start + MATRIX_START.length)}\n${await documentedMatrix()}\n${text.slice(end)}`);
