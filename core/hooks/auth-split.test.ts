import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { projectSources } from '../../test/lint/project-sources.js';

/** The repository root (this file runs from dist/core/hooks/). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const { sources, importsOf } = projectSources(ROOT);

test('the auth hook only composes: no file outside core/hooks imports it, and it exports the hook alone', (t) => {
  const importers = sources('core').filter((file) => !file.startsWith('core/hooks/') && importsOf(file).includes('core/hooks/auth.ts'));
  t.deepEqual(importers, []);
  const text = readFileSync(join(ROOT, 'core/hooks/auth.ts'), 'utf8');
  t.deepEqual([...text.matchAll(/^export\s+(?:async\s+)?(?:function|const|type|interface|class)\s+(\w+)/gm)].map((match) => match[1]), ['authHook']);
});

test('the parts of the auth stage live in their layers: header policy in http, targets in routing, caller identity in identity', (t) => {
  const parts = { 'core/http/forwarded-headers.ts': ['core/http/', 'core/spec/', 'core/errors.ts'], 'core/routing/targets.ts': [], 'core/identity/caller.ts': [] } as const;
  for (const [file, allowed] of Object.entries(parts)) {
    t.true(existsSync(join(ROOT, file)), `${file} exists`);
    if (allowed.length === 0 || !existsSync(join(ROOT, file))) continue;
    t.deepEqual(importsOf(file).filter((target) => !allowed.some((prefix) => target.startsWith(prefix))), [], `${file} imports only below it`);
  }
  // Routing and identity are siblings: neither imports the other, nor a hook.
  t.deepEqual(importsOf('core/routing/targets.ts').filter((target) => target.startsWith('core/identity/') || target.startsWith('core/hooks/')), []);
  t.deepEqual(importsOf('core/identity/caller.ts').filter((target) => target.startsWith('core/routing/') || target.startsWith('core/hooks/')), []);
});
