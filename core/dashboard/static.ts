import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface StaticAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The page's files live in `core/dashboard/public/` and are served from there: tsc emits only `.ts`,
 * so from `dist/core/dashboard/` the folder is three levels up. A copy beside the module wins.
 */
export function publicDirectory(): string {
  const candidates = [new URL('./public/', import.meta.url), new URL('../../../core/dashboard/public/', import.meta.url)];
  for (const candidate of candidates) {
    const path = fileURLToPath(candidate);
    if (existsSync(join(path, 'index.html'))) return path;
  }
  throw new Error(`The dashboard's files were not found (looked in ${candidates.map((url) => fileURLToPath(url)).join(', ')}).`);
}

/**
 * Reads every asset once at boot into a map by file name: a request can only name a file that is
 * in the map, so there is no path to traverse.
 */
export function loadAssets(directory: string = publicDirectory()): Map<string, StaticAsset> {
  const assets = new Map<string, StaticAsset>();
  for (const name of readdirSync(directory)) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType) assets.set(name, { body: readFileSync(join(directory, name)), contentType });
  }
  return assets;
}
