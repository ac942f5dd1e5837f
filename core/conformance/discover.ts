import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ConformanceSubject } from '../spec/conformance.js';

const isSubject = (value: unknown): value is ConformanceSubject =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ConformanceSubject).registration?.manifest?.id === 'string' &&
  typeof (value as ConformanceSubject).fake?.render === 'function';

/** The subjects a module exports (a subject, or an array of them, under any export name). */
export function subjectsOf(module: Record<string, unknown>): ConformanceSubject[] {
  return Object.values(module).flatMap((value) => (Array.isArray(value) ? value.filter(isSubject) : isSubject(value) ? [value] : []));
}

/** The compiled tree's root (`dist/`), found from this file's place in it. */
const distRoot = () => join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Every shipped provider's conformance subject: each `plugins/providers/<id>/` folder may hold a
 * `*-conformance.ts` module exporting its subject(s). Found by convention, so a provider added to
 * the folder is run without editing a list here.
 */
export async function shippedSubjects(root = join(distRoot(), 'plugins', 'providers')): Promise<ConformanceSubject[]> {
  const subjects: ConformanceSubject[] = [];
  for (const folder of readdirSync(root, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()) {
    const files = readdirSync(join(root, folder)).filter((file) => file.endsWith('-conformance.js')).sort();
    for (const file of files) subjects.push(...subjectsOf((await import(pathToFileURL(join(root, folder, file)).href)) as Record<string, unknown>));
  }
  const seen = new Set<string>();
  return subjects.filter((subject) => {
    const id = subject.registration.manifest.id;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
