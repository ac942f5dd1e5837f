// Writes docs/errors.md from the error-code catalogue (core/error-codes.ts, built into dist/).
// usage: npm run docs:errors   (builds, then runs this)
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const { renderErrorCatalogue } = await import('../dist/core/error-codes.js');
const target = fileURLToPath(new URL('../docs/errors.md', import.meta.url));
writeFileSync(target, renderErrorCatalogue());
console.error(`wrote ${target}`);
