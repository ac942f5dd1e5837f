import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';

// The reference pages name files and code in backticks. This test fails when one names a path
// that does not exist or a code symbol that no source file contains, so the docs cannot drift
// silently from the code they describe (CHANGELOG.md and the performance history are records of
// the past and are not checked).

const ROOT = process.cwd();
const SOURCE_FOLDERS = ['core', 'plugins', 'config', 'test', 'bench', 'examples', 'scripts', '.ci', 'deploy'];
const SOURCE_FILE = /\.(?:ts|mjs|js|json|html|css|sh|yaml)$|^Dockerfile$|^run$/;
const PATH_ROOTS = /^(?:core|plugins|config|test|bench|examples|scripts|docs|\.ci)\//;

export interface Reference { readonly page: string; readonly line: number; readonly text: string }
export interface Problem extends Reference { readonly problem: string }

export function referencePages(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md') && name !== 'performance-history.md')
    .map((name) => join('docs', name));
  return ['README.md', ...pages];
}

/** Every inline code span of a page, outside fenced blocks. */
export function references(page: string, text: string): Reference[] {
  const found: Reference[] = [];
  let fenced = false;
  text.split('\n').forEach((content, index) => {
    if (/^\s*(```|~~~)/.test(content)) fenced = !fenced;
    if (fenced) return;
    for (const match of content.matchAll(/`([^`\n]+)`/g)) found.push({ page, line: index + 1, text: match[1] });
  });
  return found;
}

function sourceText(): string {
  const parts: string[] = [readFileSync(join(ROOT, 'gateway.config.ts'), 'utf8'), readFileSync(join(ROOT, 'package.json'), 'utf8')];
  for (const folder of SOURCE_FOLDERS) {
    if (!existsSync(join(ROOT, folder))) continue;
    for (const name of readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })) {
      const base = name.split('/').pop()!;
      if (name.includes('node_modules') || !SOURCE_FILE.test(base)) continue;
      const path = join(ROOT, folder, name);
      try { parts.push(readFileSync(path, 'utf8')); } catch { /* a folder named like a file */ }
    }
  }
  return parts.join('\n');
}

/** A span that names a repository path: it starts with one of the project's folders. */
function asPath(span: string): string | undefined {
  const candidate = span.replace(/[#:].*$/, '').replace(/\s.*$/, '');
  if (!PATH_ROOTS.test(candidate) || /[*<>{}]/.test(candidate)) return undefined;
  return candidate;
}

/**
 * A span that names a code symbol: a camelCase or PascalCase identifier with an inner capital, or a
 * SCREAMING_CASE constant, optionally called (`name()`) or reached through dots (`a.b.name`): the
 * last part is what must exist.
 */
function asSymbol(span: string): string | undefined {
  const match = /^(?:[A-Za-z_$][\w$]*\.)*([A-Za-z_$][\w$]*)(?:\(\))?$/.exec(span);
  if (!match) return undefined;
  const name = match[1];
  const camel = /^[a-z_$][a-z0-9_$]*[A-Z][\w$]*$/.test(name) || /^[A-Z][a-z0-9]+[A-Z][\w$]*$/.test(name);
  const constant = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(name);
  return camel || constant ? name : undefined;
}

/**
 * Names of other software the pages mention on purpose (a browser, Node, undici, a client's
 * settings, a vendor's field): they are not ours to find in the source.
 */
const EXTERNAL = new Set([
  'innerHTML', // the DOM property the dashboard never assigns
  'onRequestStart', 'onResponseStart', 'UnwrapHandler', // undici's dispatcher hooks
  'RssFile', 'resourceLimits', 'registerHooks', // Node's memory mapping label, Worker option, module hooks
  'ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'useResponsesApi', // clients' settings
  'updatePrices', 'findProvider', // the price catalogue package's API
  'autoTruncate', // Vertex AI's embeddings field, not exposed
]);

/** "`symbol` in `path`": the symbol must be in that file. */
const SYMBOL_IN_FILE = /`([^`\n]+)`\s+(?:in|of|from)\s+`([^`\n]+)`/g;

export interface Sources { readonly exists: (path: string) => boolean; readonly text: string; readonly file: (path: string) => string | undefined }

export function check(pages: ReadonlyArray<{ page: string; text: string }>, sources: Sources): Problem[] {
  const words = new Set(sources.text.match(/[A-Za-z_$][\w$]*/g));
  const problems: Problem[] = [];
  for (const { page, text } of pages) {
    text.split('\n').forEach((content, index) => {
      for (const [, span, where] of content.matchAll(SYMBOL_IN_FILE)) {
        const symbol = /^(?:[A-Za-z_$][\w$]*\.)*([A-Za-z_$][\w$]{2,})(?:\(\))?$/.exec(span)?.[1];
        const path = asPath(where);
        const file = symbol && path ? sources.file(path) : undefined;
        if (symbol && file !== undefined && !new RegExp(`\\b${symbol.replace(/\$/g, '\\$')}\\b`).test(file)) {
          problems.push({ page, line: index + 1, text: span, problem: `${path} does not name ${symbol}` });
        }
      }
    });
    for (const reference of references(page, text)) {
      const path = asPath(reference.text);
      if (path !== undefined) {
        if (!sources.exists(path)) problems.push({ ...reference, problem: `no file or folder ${path}` });
        continue;
      }
      const symbol = asSymbol(reference.text);
      if (symbol !== undefined && !EXTERNAL.has(symbol) && !words.has(symbol)) problems.push({ ...reference, problem: `no source file names ${symbol}` });
    }
  }
  return problems;
}

const format = (problems: readonly Problem[]): string => problems.map((p) => `${p.page}:${p.line} \`${p.text}\`: ${p.problem}`).join('\n');

test('every path and code symbol the docs name in backticks exists', (t) => {
  const pages = referencePages().map((page) => ({ page, text: readFileSync(join(ROOT, page), 'utf8') }));
  const all = pages.flatMap(({ page, text }) => references(page, text));
  t.true(all.length > 500, `found ${all.length} spans: the scan still reads the pages`);
  const problems = check(pages, {
    exists: (path) => existsSync(join(ROOT, path)),
    text: sourceText(),
    file: (path) => (existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile() ? readFileSync(join(ROOT, path), 'utf8') : undefined),
  });
  t.is(format(problems), '');
});

test('the check fails on a planted stale path and a planted stale symbol', (t) => {
  const page = {
    page: 'docs/planted.md',
    text: 'See `core/no-such-file.ts` and `OPERATIONS_TABLE`, `createNothingHere()`.\n`OPERATIONS` in `core/app.ts` maps paths.\n```\n`core/in-a-fence.ts`\n```\n',
  };
  const files = { 'core/app.ts': 'const operationsWith = 1;' } as Record<string, string>;
  const problems = check([page], { exists: () => false, text: 'const somethingElse = 1; OPERATIONS', file: (path) => files[path] });
  t.deepEqual(problems.map((p) => `${p.line} ${p.text}`), ['2 OPERATIONS', '1 core/no-such-file.ts', '1 OPERATIONS_TABLE', '1 createNothingHere()', '2 core/app.ts']);
  t.deepEqual(check([page], { exists: () => true, text: 'OPERATIONS_TABLE createNothingHere OPERATIONS', file: () => 'OPERATIONS' }), []);
});

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function anchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    for (const [, id] of fenced ? [] : line.matchAll(/<a (?:id|name)="([^"]+)"/g)) found.add(id);
    const heading = fenced ? undefined : /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = anchor(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** Every relative link of the pages points at a file that exists and, with `#…`, at one of its headings. */
export function brokenLinks(pages: ReadonlyArray<{ page: string; text: string }>, read: (path: string) => string | undefined, exists: (path: string) => boolean): string[] {
  const broken: string[] = [];
  for (const { page, text } of pages) {
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue;
      const [file, fragment] = target.split('#');
      const path = file === '' ? page : join(page, '..', file);
      if (!exists(path)) { broken.push(`${page}: ${target} (no ${path})`); continue; }
      if (fragment === undefined || !path.endsWith('.md')) continue;
      if (!anchors(read(path) ?? '').has(fragment)) broken.push(`${page}: ${target} (no heading #${fragment} in ${path})`);
    }
  }
  return broken;
}

test('every relative link of the docs reaches a file and a heading', (t) => {
  const pages = referencePages().map((page) => ({ page, text: readFileSync(join(ROOT, page), 'utf8') }));
  const read = (path: string): string | undefined => (existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), 'utf8') : undefined);
  t.deepEqual(brokenLinks(pages, read, (path) => existsSync(join(ROOT, path))), []);
  const planted = [{ page: 'docs/a.md', text: '[x](b.md#gone) [y](b.md#kept-heading) [z](missing.md) [w](https://example.invalid/)' }];
  const files: Record<string, string> = { 'docs/b.md': '# Kept `heading`\n' };
  t.deepEqual(brokenLinks(planted, (path) => files[path], (path) => path in files), [
    'docs/a.md: b.md#gone (no heading #gone in docs/b.md)',
    'docs/a.md: missing.md (no docs/missing.md)',
  ]);
});
