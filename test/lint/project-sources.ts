import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Reading the project's own TypeScript sources for the structure tests: `root` is the repository
 * root (each test computes it from where its build runs).
 */
export function projectSources(root: string) {
  return {
    /** The TypeScript sources (tests left out) under `folder`, relative to the root. */
    sources(folder: string): string[] {
      return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
        .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts'))
        .map((name) => join(folder, name));
    },
    /** The project files `file` imports, type-only imports included (relative specifiers, `.js` read as the `.ts` source). */
    importsOf(file: string): string[] {
      const text = readFileSync(join(root, file), 'utf8');
      return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/g)]
        .map((match) => relative(root, resolve(root, dirname(file), match[1])).replace(/\.js$/, '.ts'))
        .filter((target) => existsSync(join(root, target)));
    },
  };
}
