import type { ServerResponse } from 'node:http';
import type { Fake } from '../fakes/openai-fake.js';

// What the batch fakes (anthropic, gemini, bedrock, vertex-ai) share: their JSON answers, the
// objects they serve, the JSONL they read, and the shape a test gets back.

/** A JSON answer with its length (and any headers the vendor adds, such as an error type). */
export function sendJson(response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(value);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers }).end(text);
}

/** A stored object's bytes. */
export function sendObject(response: ServerResponse, object: Buffer): void {
  response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(object.length) }).end(object);
}

/** An uploaded JSONL object, one parsed value a line. */
export const parseJsonl = (object: Buffer): any[] =>
  object
    .toString('utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

/**
 * A job's output lines: for each input item with an outcome (by index; undefined: it did not run),
 * the line `lineOf` writes; items without an outcome are left out.
 */
export function outcomeLines<Item, Outcome>(items: readonly Item[], outcomes: ReadonlyArray<Outcome | undefined>, lineOf: (item: Item, outcome: Outcome) => unknown): string[] {
  const lines: string[] = [];
  items.forEach((item, index) => {
    const outcome = outcomes[index];
    if (outcome !== undefined) lines.push(JSON.stringify(lineOf(item, outcome)));
  });
  return lines;
}

/** The fake a test gets: the server, what the fake adds, and `only()`, the one job (or batch) it holds. */
export function batchFake<Job, Added extends object>(fake: Fake, jobs: Map<string, Job>, what: string, added: Added): Fake & Added & { only(): Job } {
  return {
    ...fake,
    requests: fake.requests,
    close: () => fake.close(),
    handle: (next) => fake.handle(next),
    ...added,
    only() {
      if (jobs.size !== 1) throw new Error(`expected one ${what}, found ${jobs.size}`);
      return [...jobs.values()][0];
    },
  };
}
