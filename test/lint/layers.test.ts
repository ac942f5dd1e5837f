import test from 'ava';
import { readFileSync } from 'node:fs';
import { type BackArrow, backArrows, layerOf, LAYER_NAMES, references, sameLayerCircles } from './layers.js';
import { sources } from './sizes.js';

// The layered core (issue 32, item 3): a file in core imports only from its own layer or below, in
// the order test/lint/layers.ts declares and docs/architecture.md ("Layers") writes down. Every
// module reference counts, type-only and dynamic ones included. Tests (*.test.ts) are not checked.

const describe = (arrow: BackArrow) => `${arrow.arrow} (line ${arrow.line}): ${arrow.fromLayer} imports ${arrow.toLayer}`;

test('no file in core imports from a higher layer', (t) => {
  const files = sources('core');
  t.true(files.length > 100, 'the walk finds core\'s sources');
  const found = files.flatMap((path) => backArrows(path, readFileSync(path, 'utf8')));
  t.deepEqual(found.map(describe), [], 'move what these need to the layer that owns it (test/lint/layers.ts)');
});

test('every file in core has a layer', (t) => {
  t.deepEqual(sources('core').filter((path) => layerOf(path) === undefined), []);
});

test('the checker finds a planted back arrow of every kind of import, with its line and layers', (t) => {
  const code = [
    "import { errors } from '../errors.js';",
    "import type { Operation } from '../api/operation.js';",
    "import { type RouteStore } from '../routing/store.js';",
    "export { adminGuard } from '../admin/guard.js';",
    "export type * from '../hooks/auth.js';",
    "const lazy = () => import('../cli/main.js');",
    "type Lazy = import('../app.js').Gateway;",
    "import { keys } from './keys.js';",
    "import Koa from 'koa';",
    'export const used: unknown[] = [errors, keys, Koa, lazy];',
    'export type Used = Operation | RouteStore | Lazy;',
  ].join('\n');
  t.deepEqual(backArrows('core/pipeline/planted.ts', code).map(describe), [
    'core/pipeline/planted.ts -> core/api/operation.ts (line 2): pipeline imports api',
    'core/pipeline/planted.ts -> core/routing/store.ts (line 3): pipeline imports subsystems',
    'core/pipeline/planted.ts -> core/admin/guard.ts (line 4): pipeline imports surfaces',
    'core/pipeline/planted.ts -> core/hooks/auth.ts (line 5): pipeline imports hooks',
    'core/pipeline/planted.ts -> core/cli/main.ts (line 6): pipeline imports entry points',
    'core/pipeline/planted.ts -> core/app.ts (line 7): pipeline imports app',
  ]);
  t.is(references('x.ts', code).length, 9);
});

test('an import within its layer or below passes; assemble modules and spec barrels sit high', (t) => {
  t.deepEqual(backArrows('core/vault/planted.ts', "import { x } from '../routing/route.js';\nimport { y } from '../store/index.js';\nimport { z } from '../errors.js';\n"), []);
  t.deepEqual(backArrows('core/app.ts', "import { cacheParts } from './cache/assemble.js';\nimport { adminParts } from './admin/assemble.js';\n"), []);
  t.is(backArrows('core/store/planted.ts', "import { vaultParts } from '../vault/assemble.js';\n").length, 1);
  t.is(LAYER_NAMES[layerOf('core/vault/assemble.ts') ?? -1], 'app');
  t.is(LAYER_NAMES[layerOf('core/spec/provider/index.ts') ?? -1], 'toolkits');
  t.is(LAYER_NAMES[layerOf('core/spec/provider/toolkit.ts') ?? -1], 'base');
  t.is(LAYER_NAMES[layerOf('core/identity/caller.ts') ?? -1], 'identity');
  t.is(layerOf('core/nowhere/file.ts'), undefined);
  t.throws(() => backArrows('core/nowhere/file.ts', ''), { message: /in no layer/ });
});

test('no two folders of one layer import each other, directly or round a ring', (t) => {
  const files = sources('core').map((path) => ({ path, text: readFileSync(path, 'utf8') }));
  t.deepEqual(sameLayerCircles(files), [], 'move what both sides need below them');
});

test('the circle check finds a planted circle within a layer, and passes imports one way or across layers', (t) => {
  const file = (path: string, ...imports: string[]) => ({ path, text: imports.map((specifier, index) => `import { x${index} } from '${specifier}';`).join('\n') });
  t.deepEqual(
    sameLayerCircles([
      file('core/vault/limits.ts', '../routing/attempt-usage.js', '../store/index.js'),
      file('core/routing/first-event.ts', '../logs/entry.js'),
      file('core/logs/entry.ts', '../vault/usage.js', '../pipeline/context.js'),
      file('core/cache/hook.ts', '../routing/route.js'),
      file('core/vault/assemble.ts', '../cache/hook.js'),
    ]),
    [
      [
        'core/logs -> core/vault (core/logs/entry.ts:1)',
        'core/routing -> core/logs (core/routing/first-event.ts:1)',
        'core/vault -> core/routing (core/vault/limits.ts:1)',
      ],
    ],
  );
  t.deepEqual(sameLayerCircles([file('core/vault/a.ts', '../routing/b.js'), file('core/routing/b.ts', '../store/c.js'), file('core/store/c.ts')]), []);
});
