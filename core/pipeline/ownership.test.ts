import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import ts from 'typescript';
import { STAGES, type StageName } from '../spec/stage.js';
import type { GatewayContext } from './context.js';
import type { Hook } from './hook.js';
import { compose, FROZEN_AFTER } from './runner.js';

// Issue 32: the ownership table of docs/architecture.md ("Who writes and who reads each field")
// is checked against the code: every field of `GatewayContext` has a row, every assignment to
// `context.<field>` (or `context.<field>.<part>`) in core is made from a file the row lists, and
// the "Frozen" column is what the runner freezes in development.

/** The repository root (this file runs from dist/core/pipeline/). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

interface Row {
  readonly fields: readonly string[];
  readonly files: readonly string[];
  readonly frozen: string;
}

const ticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);

/** The rows of the ownership table: the fields (backticked, outside parentheses), the writer files, the "Frozen" cell. */
function ownershipTable(markdown: string): Row[] {
  const lines = markdown.split('\n');
  const header = lines.findIndex((line) => /^\|\s*Field\s*\|\s*Written by\s*\|\s*Files\s*\|\s*Frozen\s*\|\s*Read by\s*\|$/.test(line.trim()));
  if (header === -1) throw new Error('docs/architecture.md has no "| Field | Written by | Files | Frozen | Read by |" table');
  const rows: Row[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim());
    rows.push({ fields: ticked(cells[0].replace(/\([^)]*\)/g, '')), files: ticked(cells[2]), frozen: cells[3] });
  }
  return rows;
}

/** The request's context and the parts of it handed to plugins (a `KeyResolver` writes the `key` slice through `KeyResolutionContext`). */
const CONTEXT_TYPES = new Set(['GatewayContext', 'KeyResolutionContext']);

/** A write to a context field: `context.<field> = …`, `context.<field>.<part> = …` (and `??=`, `+=`, …). */
interface Write {
  readonly file: string;
  readonly field: string;
  readonly line: number;
}

const isAssignment = (kind: ts.SyntaxKind): boolean => kind >= ts.SyntaxKind.FirstAssignment && kind <= ts.SyntaxKind.LastAssignment;

/** The TypeScript sources of core (tests left out), relative to the root. */
function coreSources(): string[] {
  return readdirSync(join(ROOT, 'core'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts'))
    .map((name) => join('core', name).split('\\').join('/'));
}

/**
 * Every write to a field of a `GatewayContext` in core's sources, found with the type checker
 * (whatever the variable is called): an assignment whose target is `<a GatewayContext>.<field>`, or
 * a property (or element) of it, however deep. `planted` replaces a file's text (the check's own test).
 */
function contextWrites(planted: ReadonlyMap<string, string> = new Map()): Write[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), { noEmit: true, incremental: false }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  const host = ts.createCompilerHost(config.options);
  const original = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, create) => {
    const text = planted.get(name.slice(ROOT.length + 1).split('\\').join('/'));
    return text === undefined ? original(name, language, onError, create) : ts.createSourceFile(name, text, language, true);
  };
  const files = coreSources();
  const program = ts.createProgram(files.map((file) => join(ROOT, file)), config.options, host);
  const checker = program.getTypeChecker();
  const isContext = (expression: ts.Expression): boolean => {
    const type = checker.getNonNullableType(checker.getTypeAtLocation(expression));
    const name = (type.aliasSymbol ?? type.getSymbol())?.getName();
    return name !== undefined && CONTEXT_TYPES.has(name);
  };
  /** The context field a written expression is rooted at (`context.X`, `context.X.Y`, `(context.X ??= …).Y`), if any. */
  const rootField = (target: ts.Expression): string | undefined => {
    let expression = target;
    for (;;) {
      if (ts.isParenthesizedExpression(expression) || ts.isNonNullExpression(expression) || ts.isAsExpression(expression)) expression = expression.expression;
      else if (ts.isBinaryExpression(expression) && isAssignment(expression.operatorToken.kind)) expression = expression.left;
      else if (ts.isPropertyAccessExpression(expression) || ts.isElementAccessExpression(expression)) {
        if (isContext(expression.expression)) return ts.isPropertyAccessExpression(expression) ? expression.name.text : '[element]';
        expression = expression.expression;
      } else return undefined;
    }
  };
  const writes: Write[] = [];
  for (const file of files) {
    const source = program.getSourceFile(join(ROOT, file))!;
    const visit = (node: ts.Node): void => {
      if (ts.isBinaryExpression(node) && isAssignment(node.operatorToken.kind)) {
        const field = rootField(node.left);
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        // `(context.log ??= {}).costUsd = …` is one write (the inner assignment is visited too).
        if (field !== undefined && !writes.some((write) => write.file === file && write.field === field && write.line === line)) writes.push({ file, field, line });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return writes;
}

/** The writes no row allows: a field with no row, or a file the field's row does not list. */
function violations(rows: readonly Row[], writes: readonly Write[]): string[] {
  const writers = new Map<string, readonly string[]>();
  for (const row of rows) for (const field of row.fields) writers.set(field, row.files);
  const found: string[] = [];
  for (const write of writes) {
    const allowed = writers.get(write.field);
    if (allowed === undefined) found.push(`${write.file}:${write.line} writes context.${write.field}, which the ownership table does not list`);
    else if (!allowed.includes(write.file)) found.push(`${write.file}:${write.line} writes context.${write.field}, which the ownership table gives to ${allowed.join(', ') || 'no file (read-only)'}`);
  }
  return found;
}

/**
 * The property names of `GatewayContext`: its declaration in core/pipeline/context.ts and the
 * subsystems' module augmentations of it (`declare module '…/pipeline/context.js'`), with the file
 * that declares each.
 */
function contextFields(files: ReadonlyMap<string, string>): Map<string, string> {
  const fields = new Map<string, string>();
  const collect = (file: string, statements: ts.NodeArray<ts.Statement>) => {
    for (const node of statements) {
      if (!ts.isInterfaceDeclaration(node) || node.name.text !== 'GatewayContext') continue;
      for (const member of node.members) if (member.name && ts.isIdentifier(member.name)) fields.set(member.name.text, file);
    }
  };
  for (const [file, text] of files) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    if (file === 'core/pipeline/context.ts') collect(file, source.statements);
    for (const node of source.statements) {
      if (!ts.isModuleDeclaration(node) || !ts.isStringLiteral(node.name) || !node.body || !ts.isModuleBlock(node.body)) continue;
      if (join(dirname(file), node.name.text).split('\\').join('/') === 'core/pipeline/context.js') collect(file, node.body.statements);
    }
  }
  return fields;
}

const declared = contextFields(new Map(coreSources().map((file) => [file, readFileSync(join(ROOT, file), 'utf8')])));

const rows = ownershipTable(readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8'));

test('the ownership table lists every field of GatewayContext, once, and nothing else', (t) => {
  const listed = rows.flatMap((row) => row.fields);
  t.deepEqual([...listed].sort(), [...new Set(listed)].sort(), 'a field is listed twice');
  t.deepEqual([...listed].sort(), [...declared.keys()].sort());
  t.true(listed.includes('routing'));
  t.true(listed.includes('routed'));
});

test('the subsystems declare their slices by module augmentation, and the field reader finds them', (t) => {
  t.is(declared.get('routing'), 'core/routing/slices.ts');
  t.is(declared.get('routed'), 'core/routing/slices.ts');
  t.is(declared.get('cache'), 'core/cache/slice.ts');
  t.is(declared.get('guardrail'), 'core/guardrails/slice.ts');
  t.is(declared.get('auth'), 'core/pipeline/context.ts');
  // A planted augmentation adds its field; one of another module does not.
  const planted = contextFields(
    new Map([
      ['core/pipeline/context.ts', 'export interface GatewayContext { traceId: string }'],
      ['core/teams/slice.ts', "declare module '../pipeline/context.js' { interface GatewayContext { team?: string } }\nexport {};"],
      ['core/other/slice.ts', "declare module '../pipeline/hook.js' { interface GatewayContext { other?: string } }\nexport {};"],
    ]),
  );
  t.deepEqual([...planted], [['traceId', 'core/pipeline/context.ts'], ['team', 'core/teams/slice.ts']]);
});

const writes = contextWrites();

test('every write to a context field in core is made from a file its row lists, and every listed file writes it', (t) => {
  t.deepEqual(violations(rows, writes), []);
  // The table names no writer that does not write: a stale row fails too.
  for (const row of rows) {
    for (const file of row.files) t.true(writes.some((write) => write.file === file && row.fields.includes(write.field)), `${file} is listed as writing ${row.fields.join(', ')} but does not`);
  }
});

test('a planted foreign write is found: the cache hook writing the routing slice, the forward stage writing auth and guardrail', (t) => {
  const hook = readFileSync(join(ROOT, 'core/cache/hook.ts'), 'utf8');
  const forward = readFileSync(join(ROOT, 'core/hooks/forward.ts'), 'utf8');
  const planted = new Map([
    ['core/cache/hook.ts', `${hook}\nexport function planted(seen: GatewayContext, target: string): void {\n  (seen.routing as { target?: string }).target = target;\n}\n`],
    ['core/hooks/forward.ts', `${forward}\nexport function planted(context: GatewayContext): void {\n  context.auth = undefined;\n  context.guardrail!.policy = 'other';\n}\n`],
  ]);
  const hookLines = hook.split('\n').length;
  const forwardLines = forward.split('\n').length;
  t.deepEqual(violations(rows, contextWrites(planted)), [
    `core/cache/hook.ts:${hookLines + 2} writes context.routing, which the ownership table gives to core/hooks/auth.ts`,
    `core/hooks/forward.ts:${forwardLines + 2} writes context.auth, which the ownership table gives to core/hooks/auth.ts`,
    `core/hooks/forward.ts:${forwardLines + 3} writes context.guardrail, which the ownership table gives to core/hooks/guardrail.ts`,
  ]);
});

test('the "Frozen" column is what the runner freezes after each stage', (t) => {
  for (const stage of STAGES) {
    const documented = rows.filter((row) => row.frozen === stage).flatMap((row) => row.fields);
    t.deepEqual([...documented].sort(), [...FROZEN_AFTER[stage]].sort(), `stage ${stage}`);
  }
});

/** A context with the slices the freezing concerns, and a hook per stage that tries `write` (named by stage). */
function run(development: boolean, writer: StageName, write: (context: GatewayContext) => void): Promise<void> {
  const context = { auth: { caller: {} }, routing: { plan: {}, label: {} }, request: { streaming: false } } as unknown as GatewayContext;
  const hooks: Hook[] = (['auth', 'guardrail', 'transform', 'forward'] as const).map((stage) => ({
    name: `hook-${stage}`,
    stage,
    async run(seen, next) {
      if (stage === writer) write(seen);
      await next();
    },
  }));
  return compose(hooks, development)(context);
}

test('in development a slice is frozen once its stage is done: a later stage writing it fails loudly; in production it is not', async (t) => {
  const foreign = (context: GatewayContext): void => {
    (context.routing as { target?: string }).target = 'other';
  };
  await t.throwsAsync(run(true, 'transform', foreign), { instanceOf: TypeError });
  await t.throwsAsync(
    run(true, 'forward', (context) => {
      Object.assign(context.auth!, { policy: 'other' });
    }),
    { instanceOf: TypeError },
  );
  await t.notThrowsAsync(run(false, 'transform', foreign));
  // The owning stage writes its slice before it is frozen.
  await t.notThrowsAsync(
    run(true, 'auth', (context) => {
      Object.assign(context.auth!, { policy: 'own' });
    }),
  );
});
