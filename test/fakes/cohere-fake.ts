import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const fixtures = join(process.cwd(), 'plugins/providers/cohere/__fixtures__');

export const cohereFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** The stream's lines (one event's JSON each). */
export const cohereStreamLines = (name: string): string[] => cohereFixture(name).split('\n').filter(Boolean);

/** A recorded stream as Cohere sends it: `event: <type>` and `data: <json>` per event. */
export const cohereStreamEvents = (name: string): string[] =>
  cohereStreamLines(name).map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`);
