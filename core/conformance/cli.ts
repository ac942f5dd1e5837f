import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { shippedSubjects, subjectsOf } from './discover.js';
import { formatReport, runConformance } from './kit.js';
import type { ConformanceSubject } from '../spec/conformance.js';

/**
 * `npm run conformance -- <id> [<id>...]` runs the kit on shipped providers; `--all` on every one;
 * `--module <path.js>` on the subjects a compiled module of your own exports. Exits 1 when any fails.
 */
async function main(args: string[]): Promise<number> {
  let subjects: ConformanceSubject[];
  const moduleIndex = args.indexOf('--module');
  if (moduleIndex >= 0) {
    const path = args[moduleIndex + 1];
    if (!path) throw new Error('--module needs the path of a compiled module exporting a conformance subject');
    subjects = subjectsOf((await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>);
    if (subjects.length === 0) throw new Error(`${path} exports no conformance subject`);
  } else {
    const shipped = await shippedSubjects();
    const ids = args.filter((arg) => !arg.startsWith('--'));
    if (args.includes('--all') || ids.length === 0) {
      if (ids.length === 0 && !args.includes('--all')) {
        process.stdout.write(`usage: npm run conformance -- <provider id>... | --all | --module <file.js>\nproviders: ${shipped.map((subject) => subject.registration.manifest.id).join(', ')}\n`);
        return 2;
      }
      subjects = shipped;
    } else {
      subjects = [];
      for (const id of ids) {
        const subject = shipped.find((candidate) => candidate.registration.manifest.id === id);
        if (!subject) {
          const known = shipped.map((candidate) => candidate.registration.manifest.id);
          process.stderr.write(`no conformance subject for "${id}"; known: ${known.join(', ')}\n`);
          return 2;
        }
        subjects.push(subject);
      }
    }
  }
  let failed = 0;
  for (const subject of subjects) {
    const report = await runConformance(subject);
    process.stdout.write(`${formatReport(report)}\n\n`);
    if (!report.passed) failed++;
  }
  if (subjects.length > 1) process.stdout.write(`${subjects.length - failed} of ${subjects.length} providers conform\n`);
  return failed === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`conformance: ${(error as Error).message}\n`);
    process.exit(2);
  },
);
