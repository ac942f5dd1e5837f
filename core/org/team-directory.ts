import type { TeamRecord } from './records.js';

/** How long a team read for the request path is kept: a change to a team applies within this. */
const TEAM_TTL_MS = 1_000;

/**
 * Teams for the request path (a team key's allowed models and providers, its default policy): kept
 * in memory for a second, so a request through a team's key costs a map lookup, and a change made
 * on any instance applies within a second everywhere.
 */
export class TeamDirectory {
  private readonly cache = new Map<string, { readonly team: TeamRecord | undefined; readonly at: number }>();

  constructor(
    private readonly read: (id: string) => Promise<TeamRecord | undefined>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The team (synchronously when it was read within the last second). */
  get(id: string): TeamRecord | undefined | Promise<TeamRecord | undefined> {
    const now = this.now();
    const hit = this.cache.get(id);
    if (hit !== undefined && now - hit.at < TEAM_TTL_MS) return hit.team;
    return this.read(id).then((team) => {
      if (this.cache.size >= 10_000) this.cache.clear();
      this.cache.set(id, { team, at: now });
      return team;
    });
  }
}

/** Whether a model matches a team's `allowed_models` entry: the same name, or a `prefix*`. */
export function modelAllowed(model: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) => (entry.endsWith('*') ? model.startsWith(entry.slice(0, -1)) : entry === model));
}
