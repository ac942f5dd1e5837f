import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { ERROR_CODES, renderErrorCatalogue } from '../../core/error-codes.js';
import { errors, errorTypeForStatus } from '../../core/errors.js';

// docs/errors.md is generated from core/error-codes.ts, and that table must hold every code the
// gateway's own code sends, with the status and type it is sent with.

const ROOT = process.cwd();
const catalogue = new Map(Object.values(ERROR_CODES).flatMap((area) => Object.entries(area)));

function sources(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') && !/-fake|conformance/.test(name))
    .map((name) => join(folder, name));
}

interface Site {
  readonly code: string;
  readonly file: string;
  /** The status and type of the factory that builds it, when the statement names one. */
  readonly built?: { status: number; type: string };
}

const factoryOf = (name: string): { status: number; type: string } | undefined => {
  const make = (errors as Record<string, ((message: string) => { status: number; body: { type: string } }) | undefined>)[name];
  if (make === undefined) return undefined;
  const error = make('probe');
  return { status: error.status, type: error.body.type };
};

/** Every error code written in the gateway's source, with the factory of its statement. */
function codeSites(): Site[] {
  const sites: Site[] = [];
  for (const file of [...sources('core'), ...sources('plugins'), ...sources('config')]) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/\bcode: '([a-z][a-z0-9_]*)'/g)) {
      // The statement so far: from the last line that ended one.
      const before = text.slice(0, match.index);
      const statement = before.slice(Math.max(before.lastIndexOf(';\n'), before.lastIndexOf('{\n'), before.lastIndexOf('=>\n')));
      const factories = [...statement.matchAll(/\berrors\.(\w+)\(|new GatewayError\(\s*(\d{3})/g)];
      const last = factories.at(-1);
      const built = last === undefined ? undefined : last[1] !== undefined ? factoryOf(last[1]) : { status: Number(last[2]), type: /type: '([a-z_]+)'/.exec(text.slice(last.index))?.[1] ?? '' };
      sites.push({ code: match[1], file, built });
    }
  }
  return sites;
}

/** Codes the source composes rather than writes (`${what}_not_found` in virtual-key-actions.ts). */
const COMPOSED = ['credential_not_found', 'virtual_key_not_found'];

test('docs/errors.md is generated from the catalogue (run npm run docs:errors after changing core/error-codes.ts)', (t) => {
  t.is(readFileSync(join(ROOT, 'docs/errors.md'), 'utf8'), renderErrorCatalogue(), 'docs/errors.md is out of date: npm run docs:errors writes it');
});

test('every error code the source sends is in the catalogue, with the status and type it is sent with', (t) => {
  const sites = codeSites();
  t.true(sites.length > 80, `found ${sites.length} sites`);
  for (const site of sites) {
    const entry = catalogue.get(site.code);
    if (entry === undefined) {
      t.fail(`${site.file}: the code ${site.code} is not in core/error-codes.ts`);
      continue;
    }
    if (site.built === undefined) continue;
    t.true(entry.status.includes(site.built.status), `${site.file}: ${site.code} is sent with ${site.built.status}; the catalogue says ${entry.status.join(', ')}`);
    if (entry.status[0] === site.built.status) {
      t.is(entry.type ?? errorTypeForStatus(entry.status[0]), site.built.type, `${site.file}: the type of ${site.code}`);
    }
  }
  const written = new Set(sites.map((site) => site.code));
  const composed = readFileSync(join(ROOT, 'core/admin/virtual-key-actions.ts'), 'utf8');
  t.true(composed.includes("_not_found` })") && composed.includes("'credential' | 'virtual key'"), 'the composed codes are still composed so');
  for (const code of catalogue.keys()) t.true(written.has(code) || COMPOSED.includes(code), `the catalogue's ${code} is sent nowhere: remove it`);
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replaceAll(' ', '-');

test('docs/troubleshooting.md names real codes and quotes real messages, its links resolve, and docs/README.md links it and errors.md', (t) => {
  const page = readFileSync(join(ROOT, 'docs/troubleshooting.md'), 'utf8');
  const named = new Set([...page.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map((match) => match[1]).filter((word) => catalogue.has(word)));
  for (const code of ['missing_api_key', 'invalid_api_key', 'too_many_failed_auth', 'budget_exceeded', 'model_not_priced', 'rate_limit_exceeded', 'custom_host_refused', 'upstream_unreachable', 'upstream_timeout', 'no_healthy_target', 'internal_error']) {
    t.true(named.has(code), `the page covers ${code}`);
  }
  // What the console prints, as the page quotes it, is what the code prints.
  const source = ['bin/llm-gateway.js', 'core/cli/main.ts', 'core/cli/start.ts', 'core/vault/service.ts', 'core/identity/account-key.ts'].map((file) => readFileSync(join(ROOT, file), 'utf8')).join('\n');
  for (const quoted of ['needs Node ${REQUIRED_NODE_MAJOR} or later; this is Node', 'is already in use (EADDRINUSE)', 'could not be loaded', 'must export its configuration as default', "cannot open this gateway's vault", 'an account key must have at least ${ACCOUNT_KEY_MIN_LENGTH}']) {
    t.true(source.includes(quoted), `the source prints "${quoted}"`);
    t.true(page.includes(quoted.replace('${REQUIRED_NODE_MAJOR}', '24').replace('${ACCOUNT_KEY_MIN_LENGTH}', '24')), `the page quotes "${quoted}"`);
  }
  for (const [, file, hash] of page.matchAll(/\]\(([a-z-]+\.md)(?:#([a-z0-9-]+))?\)/g)) {
    const target = readFileSync(join(ROOT, 'docs', file), 'utf8');
    if (hash !== undefined) t.true([...target.matchAll(/^#+ (.+)$/gm)].some((heading) => anchor(heading[1]) === hash), `${file}#${hash} exists`);
  }
  const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
  for (const linked of ['(troubleshooting.md)', '(errors.md)']) t.true(index.includes(linked), `docs/README.md links ${linked}`);
});
