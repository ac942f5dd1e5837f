import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { extname } from 'node:path';

/**
 * An operator's configuration file and the files of their own it imports are ES modules (the file
 * must `export default`), whatever the nearest package.json says: a folder made by `npm init -y`
 * declares `"type": "commonjs"`, where Node would refuse the file's `import` statements, and a
 * package.json without `"type"` makes Node reparse the file and print a warning. Node's own rules
 * still apply to everything in node_modules, to `.mjs`/`.mts`/`.cjs`/`.cts` files (their extension
 * decides) and to anything the configuration does not import.
 */
const operatorModules = new Set<string>();
let registered = false;

/** An extension whose module format the nearest package.json decides. */
const AMBIGUOUS = new Set(['.js', '.ts']);

function isOperatorFile(url: string): boolean {
  return url.startsWith('file:') && !url.includes('/node_modules/') && AMBIGUOUS.has(extname(new URL(url).pathname));
}

/** Loads `url` (a configuration file) and the operator files it imports as ES modules. */
export function treatAsOperatorModule(url: string): void {
  operatorModules.add(url);
  if (registered) return;
  registered = true;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      if (context.parentURL !== undefined && operatorModules.has(context.parentURL) && isOperatorFile(resolved.url)) operatorModules.add(resolved.url);
      return resolved;
    },
    load(url, context, nextLoad) {
      if (!operatorModules.has(url) || !isOperatorFile(url)) return nextLoad(url, context);
      const format = extname(new URL(url).pathname) === '.ts' ? 'module-typescript' : 'module';
      return { format, source: readFileSync(new URL(url)), shortCircuit: true };
    },
  });
}
