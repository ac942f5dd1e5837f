import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MANIFESTS, manifestText, RENDERED } from './helm.js';

// `npm run deploy:manifests`: renders the chart into deploy/kubernetes/*.yaml with the pinned helm
// (test/deploy/helm.ts); test/deploy/chart.test.ts fails when a committed file differs.
for (const entry of RENDERED) {
  writeFileSync(join(MANIFESTS, entry.file), manifestText(entry));
  process.stdout.write(`wrote deploy/kubernetes/${entry.file}\n`);
}
