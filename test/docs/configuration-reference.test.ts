import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import ts from 'typescript';

// docs/configuration.md is the reference of every environment variable the gateway reads and every
// gateway.config.ts option: this test fails when the code has one the page lacks.

const ROOT = process.cwd();
const page = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
const documented = (name: string): boolean => page.includes(`\`${name}\``);

function sources(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') && !/-fake|conformance/.test(name))
    .map((name) => join(folder, name));
}

/** Environment variables read anywhere in the gateway's own code (`environment.X`, `process.env.X`, `env.X`, `environment['X']`). */
function environmentVariables(): string[] {
  const names = new Set<string>();
  for (const file of [...sources('core'), ...sources('config')]) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/\b(?:environment|process\.env|env)(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])/g)) names.add(match[1] ?? match[2]);
  }
  return [...names].sort();
}

/** Every option path of GatewayConfig (`upstream.timeoutMs`), following the interfaces and inline types declared in config/index.ts. */
function configOptions(): string[] {
  const file = join(ROOT, 'config/index.ts');
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) interfaces.set(node.name.text, node);
  });
  const paths: string[] = [];
  const walk = (members: ts.NodeArray<ts.TypeElement>, prefix: string, seen: Set<string>): void => {
    for (const member of members) {
      if (!ts.isPropertySignature(member) || !member.name) continue;
      const path = `${prefix}${member.name.getText(source)}`;
      paths.push(path);
      const type = member.type;
      if (type && ts.isTypeLiteralNode(type)) walk(type.members, `${path}.`, seen);
      if (type && ts.isTypeReferenceNode(type)) {
        const name = type.typeName.getText(source);
        const declaration = interfaces.get(name);
        if (declaration && !seen.has(name)) walk(declaration.members, `${path}.`, new Set([...seen, name]));
      }
    }
  };
  walk(interfaces.get('GatewayConfig')!.members, '', new Set(['GatewayConfig']));
  return paths;
}

test('every environment variable the gateway reads is in docs/configuration.md', (t) => {
  const variables = environmentVariables();
  t.true(variables.length >= 20, `found ${variables.length}: the scan still finds the variables`);
  t.deepEqual(variables.filter((name) => !documented(name)), []);
});

test('every gateway.config.ts option is in docs/configuration.md', (t) => {
  const options = configOptions();
  t.true(options.includes('upstream.timeoutMs') && options.includes('server.failedAuth.perAddress'), 'the walk reaches nested options');
  t.deepEqual(options.filter((path) => !documented(path)), []);
});
