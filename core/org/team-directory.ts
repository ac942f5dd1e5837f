import type { TeamRecord } from './records.js';

/** How long a read for the request path is kept: a change (to a team, a service account) applies within this. */
const FRESH_MS = 1_000;

/**
 * Records the request path reads by id (a team key's team, a JWT subject's service account), kept in
 * memory for a second: a request costs a map lookup, and a change made on any instance applies within
 * a second everywhere. Bounded: past 10 000 ids it starts over.
 */
export class SecondCache<Value> {
  private readonly cache = new Map<string, { readonly value: Value; readonly at: number }>();

  constructor(
    private readonly read: (id: string) => Promise<Value>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Drops what was read for `id`: the next `get` reads it again (a change announced by the shared state). */
  forget(id: string): void {
    this.cache.delete(id);
  }

  /** The value (synchronously when it was read within the last second). */
  get(id: string): Value | Promise<Value> {
    const now = this.now();
    const hit = this.cache.get(id);
    if (hit !== undefined && now - hit.at < FRESH_MS) return hit.value;
    return this.read(id).then((value) => {
      if (this.cache.size >= 10_000) this.cache.clear();
      this.cache.set(id, { value, at: now });
      return value;
    });
  }
}

/** Teams for the request path (a team key's allowed models and providers, its default policy). */
export class TeamDirectory extends SecondCache<TeamRecord | undefined> {}

/** Whether a model matches a team's `allowed_models` entry: the same name, or a `prefix*`. */
export function modelAllowed(model: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) => (entry.endsWith('*') ? model.startsWith(entry.slice(0, -1)) : entry === model));
}
