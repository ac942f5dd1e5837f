import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

// The size checker of the house rules (test/lint/house-sizes.test.ts): a function is any
// function-like node with a body (declaration, expression, arrow, method, constructor, accessor),
// counted from its first line to its last (its doc comment not included); a file by its lines.

export const MAX_FUNCTION_LINES = 100;
export const MAX_FILE_LINES = 500;
/** Files with a tighter bound than {@link MAX_FILE_LINES}. */
export const FILE_LINE_LIMITS: Readonly<Record<string, number>> = { 'core/app.ts': 199 };

/** One function or file over its bound. */
export interface Oversize {
  /** `path` for a file, `path:name` for a function. */
  readonly name: string;
  readonly lines: number;
  readonly limit: number;
  /** The line it starts on (1-based). */
  readonly line: number;
}

/** A function-like node's name as a reader finds it: its own, its variable's or property's, or its class's and method's. */
function functionName(node: ts.FunctionLikeDeclaration): string {
  const own = node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) || ts.isPrivateIdentifier(node.name)) ? node.name.text : undefined;
  const parent = node.parent;
  const member = (name: string): string => (parent && ts.isClassLike(parent) && parent.name ? `${parent.name.text}.${name}` : name);
  if (ts.isConstructorDeclaration(node)) return member('constructor');
  if (own !== undefined) return ts.isMethodDeclaration(node) || ts.isAccessor(node) ? member(own) : own;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if ((ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}

/** The functions and the file of one source over their bounds. */
export function oversizes(path: string, text: string): Oversize[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  const found: Oversize[] = [];
  const fileLines = text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  const fileLimit = FILE_LINE_LIMITS[path] ?? MAX_FILE_LINES;
  if (fileLines > fileLimit) found.push({ name: path, lines: fileLines, limit: fileLimit, line: 1 });
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = lineOf(node.getStart(source));
      const lines = lineOf(node.getEnd()) - first + 1;
      if (lines > MAX_FUNCTION_LINES) found.push({ name: `${path}:${functionName(node as ts.FunctionLikeDeclaration)}`, lines, limit: MAX_FUNCTION_LINES, line: first });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The TypeScript sources of `folder`, recursively, as paths relative to the working directory: no tests, no declarations. */
export function sources(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(process.cwd(), join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort();
}

