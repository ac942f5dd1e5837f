import test from 'ava';
import { readFileSync } from 'node:fs';
import { type BackArrow, backArrows, layerOf, LAYER_NAMES, references } from './layers.js';
import { sources } from './sizes.js';

// The layered core (issue 32, item 3): a file in core imports only from its own layer or below, in
// the order test/lint/layers.ts declares and docs/architecture.md ("Layers") writes down. Every
// module reference counts, type-only and dynamic ones included. Tests (*.test.ts) are not checked.

/**
 * The back arrows that remain, `from -> to`. An arrow here that no longer occurs fails the test,
 * so the list only shrinks; a new one is not added here but moved to the layer that owns it.
 */
const KNOWN: readonly string[] = [
  // The routing and routed slices name routing's plan types (the guardrail slice's output judge is
  // declared by its owner, by module augmentation; these are next).
  'core/pipeline/context.ts -> core/routing/plan.ts',
];

const describe = (arrow: BackArrow) => `${arrow.arrow} (line ${arrow.line}): ${arrow.fromLayer} imports ${arrow.toLayer}`;

test('no file in core imports from a higher layer (but the known back arrows)', (t) => {
  const files = sources('core');
  t.true(files.length > 100, 'the walk finds core\'s sources');
  const found = files.flatMap((path) => backArrows(path, readFileSync(path, 'utf8')));
  t.deepEqual(found.filter((arrow) => !KNOWN.includes(arrow.arrow)).map(describe), [], 'move what these need to the layer that owns it (test/lint/layers.ts)');
  const gone = KNOWN.filter((known) => !found.some((arrow) => arrow.arrow === known));
  t.deepEqual(gone, [], 'no longer back arrows: remove them from KNOWN');
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
