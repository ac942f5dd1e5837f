import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';

// The layer checker of the house rules (test/lint/layers.test.ts, docs/architecture.md "Layers"):
// core's folders stand in an order, and a file imports only from its own layer or below. Every
// module reference counts: `import` and `import type`, `export ... from`, `import x = require()`,
// dynamic `import()` and `import('...')` types.

/**
 * core's layers, lowest first. A folder (or a root file) named in a layer belongs to it; a
 * `<folder>/assemble.ts` is a composition module and belongs to `app`, whatever its folder; the
 * toolkit barrels of `spec` (`core/spec/index.ts`, `core/spec/<audience>/index.ts`) re-export the
 * core for plugin authors and stand in `toolkits`, above what they re-export (no core file imports them).
 * - base: the contracts (`spec`) and the root files every layer may use (`errors.ts`, `ids.ts`, ...).
 * - infrastructure: `http`, `store`.
 * - pipeline: the runner, the context, the hook contract.
 * - identity: who calls (`identity`: the caller's key, the account key, failed-auth counts); it
 *   reads the request context, so it stands above the pipeline.
 * - subsystems: `guardrails`, `routing`, `vault`, `cache`, `logs`, `org`, `audit` (the audit trail; it
 *   uses the log's PostgreSQL schema, importing `logs` one way), `cluster` (the state
 *   shared between processes, above `store`, which loads it), and `mcp` (the MCP gateway, above
 *   the vault and the logs it uses), `quota` (providers' quotas shared between teams).
 * - observers: `metrics` and `telemetry`, which read the pipeline's attempts, log entries and the
 *   cache's counters, and which only the composition modules import.
 * - toolkits, api, hooks, surfaces (`admin`, `dashboard`), then app (`app.ts`, `container.ts`,
 *   `plugins.ts`, the assemble modules), then the entry points: `cli`, `main.ts` and the
 *   conformance kit (it starts gateways and has a command of its own).
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['spec', 'errors.ts', 'error-codes.ts', 'ids.ts', 'redact.ts', 'require.ts', 'params-schema.ts', 'registry.ts', 'cli-io.ts'],
  ['http', 'store'],
  ['pipeline'],
  ['identity'],
  ['guardrails', 'routing', 'vault', 'cache', 'logs', 'cluster', 'org', 'audit', 'mcp', 'quota'],
  ['metrics', 'telemetry'],
  ['toolkit barrels'],
  ['api'],
  ['hooks'],
  ['admin', 'dashboard'],
  ['app.ts', 'container.ts', 'plugins.ts', 'openapi.ts', 'assemble'],
  ['cli', 'main.ts', 'conformance'],
];

export const LAYER_NAMES = ['base', 'infrastructure', 'pipeline', 'identity', 'subsystems', 'observers', 'toolkits', 'api', 'hooks', 'surfaces', 'app', 'entry points'] as const;

/** The layer of a core file (a path like `core/vault/usage.ts`), or undefined outside core or unplaced. */
export function layerOf(path: string): number | undefined {
  const parts = path.split('/');
  if (parts[0] !== 'core' || parts.length < 2) return undefined;
  const name = parts[parts.length - 1];
  if (parts.length >= 3 && name === 'assemble.ts') return LAYERS.findIndex((layer) => layer.includes('assemble'));
  if (parts[1] === 'spec' && name === 'index.ts' && parts.length <= 4) return LAYERS.findIndex((layer) => layer.includes('toolkit barrels'));
  const head = parts[1];
  const index = LAYERS.findIndex((layer) => layer.includes(head));
  return index < 0 ? undefined : index;
}

/** The relative module specifiers a file references, with their lines. */
export function references(path: string, text: string): { specifier: string; line: number }[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { specifier: string; line: number }[] = [];
  const add = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) found.push({ specifier: node.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export interface BackArrow {
  /** `from -> to`, both paths from the repository root, .ts. */
  arrow: string;
  line: number;
  fromLayer: string;
  toLayer: string;
}

/** The source file a relative specifier of `path` names (`../routing/plan.js` from `core/pipeline/context.ts`: `core/routing/plan.ts`). */
const referencedFile = (path: string, specifier: string): string => normalize(join(dirname(path), specifier)).split('\\').join('/').replace(/\.js$/, '.ts');

/** The imports of `path` (a core file with `text`) that point to a higher layer. */
export function backArrows(path: string, text: string): BackArrow[] {
  const from = layerOf(path);
  if (from === undefined) throw new Error(`${path} is in no layer: place its folder in LAYERS (test/lint/layers.ts)`);
  return references(path, text).flatMap(({ specifier, line }) => {
    if (!specifier.startsWith('.')) return [];
    const target = referencedFile(path, specifier);
    const to = layerOf(target);
    if (to === undefined || to <= from) return [];
    return [{ arrow: `${path} -> ${target}`, line, fromLayer: LAYER_NAMES[from], toLayer: LAYER_NAMES[to] }];
  });
}

/**
 * A file's part of core for the circle check: its folder under core (`core/vault`), or the file
 * itself at core's root; undefined for a composition module or a toolkit barrel (which stand in a
 * layer of their own above what they gather).
 */
function partOf(path: string): string | undefined {
  const layer = layerOf(path);
  if (layer === undefined || (['app', 'toolkits'].includes(LAYER_NAMES[layer]) && path.split('/').length > 2)) return undefined;
  return path.split('/').slice(0, 2).join('/');
}

/**
 * The circles between parts of one layer (folders import each other, directly or round a ring):
 * each one as the imports that close it, `from-part -> to-part (file:line)`, one per arrow. Layers
 * order the folders of different layers; within a layer, a circle means two subsystems that can
 * only be understood together, and what they share belongs lower.
 */
export function sameLayerCircles(files: readonly { path: string; text: string }[]): string[][] {
  const arrows = new Map<string, Map<string, string>>();
  for (const { path, text } of files) {
    const from = partOf(path);
    if (from === undefined) continue;
    for (const { specifier, line } of references(path, text)) {
      if (!specifier.startsWith('.')) continue;
      const target = referencedFile(path, specifier);
      const to = partOf(target);
      if (to === undefined || to === from || layerOf(target) !== layerOf(path)) continue;
      const out = arrows.get(from) ?? new Map<string, string>();
      if (!out.has(to)) out.set(to, `${path}:${line}`);
      arrows.set(from, out);
    }
  }
  // Tarjan's strongly connected components over the parts.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const visit = (part: string): void => {
    index.set(part, index.size);
    low.set(part, index.get(part)!);
    stack.push(part);
    for (const next of arrows.get(part)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(part, Math.min(low.get(part)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(part, Math.min(low.get(part)!, index.get(next)!));
    }
    if (low.get(part) !== index.get(part)) return;
    const component = stack.splice(stack.indexOf(part));
    if (component.length < 2) return;
    const members = new Set(component);
    circles.push(
      [...members]
        .sort()
        .flatMap((from) => [...(arrows.get(from) ?? [])].filter(([to]) => members.has(to)).map(([to, where]) => `${from} -> ${to} (${where})`))
        .sort(),
    );
  };
  for (const part of [...arrows.keys()].sort()) if (!index.has(part)) visit(part);
  return circles;
}
