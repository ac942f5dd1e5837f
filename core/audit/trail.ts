import { Readable } from 'node:stream';
import { errors } from '../errors.js';
import { timeOrderedId } from '../ids.js';
import type { Clock } from '../spec/manifest.js';
import { type AuditEvent, type AuditInput, eventHash, GENESIS_HASH, RETENTION_ACTION, scrubChanges } from './event.js';
import type { AuditStore, ChainHead, RemovedSegment } from './store.js';
import { verifyChain, type VerifyResult } from './verify.js';

/** `GET /admin/audit`'s query, parsed: times in epoch milliseconds, the cursor as it was given. */
export interface AuditListQuery {
  readonly actor?: string;
  readonly action?: string;
  readonly target?: string;
  readonly since?: number;
  readonly until?: number;
  readonly limit?: number;
  readonly cursor?: string;
  /** Only events whose target belongs to one of these teams (a team admin's view). */
  readonly teams?: readonly string[];
}

export interface AuditPage {
  readonly data: AuditEvent[];
  /** Pass as `cursor` for the next (older) page; null on the last. */
  readonly next_cursor: string | null;
}

export interface AuditTrailOptions {
  readonly clock?: Clock;
  /** Whole months kept before the current one; older months are removed by {@link AuditTrail.retain}. 0: kept forever. */
  readonly retentionMonths?: number;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;
/** Events read per query when verifying or exporting. */
const PAGE = 1000;
const ACTION = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$/;

const cursorOf = (seq: number) => Buffer.from(JSON.stringify({ seq })).toString('base64url');

function seqOfCursor(cursor: string): number {
  try {
    const { seq } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { seq?: unknown };
    if (typeof seq === 'number' && Number.isSafeInteger(seq) && seq > 0) return seq;
  } catch {
    // Reported below.
  }
  throw errors.invalidRequest('cursor is not a cursor this list gave (use next_cursor as it came).', { param: 'cursor', code: 'invalid_query' });
}

/** The first instant of the UTC month `months` before the one holding `now`. */
export function monthStart(now: number, months: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - months, 1);
}

/**
 * The tamper-evident audit trail (docs/audit.md): every event carries the previous one's hash and
 * its own, over its canonical form; {@link AuditTrail.verify} recomputes the chain and names the
 * first event that was changed, removed or inserted. Events are only appended: there is no way
 * here to update or delete one; retention removes whole months at the chain's start and records
 * that it did, in the chain.
 */
export class AuditTrail {
  private readonly clock: Clock;
  private readonly retentionMonths: number;
  private retention?: NodeJS.Timeout;
  /** The retention pass in progress, which close() waits for. */
  private retaining?: Promise<unknown>;

  constructor(
    readonly store: AuditStore,
    options: AuditTrailOptions = {},
  ) {
    this.clock = options.clock ?? { now: () => Date.now() };
    this.retentionMonths = options.retentionMonths ?? 0;
  }

  /** Appends one event to the chain; resolves with it once stored. */
  async record(input: AuditInput): Promise<AuditEvent> {
    if (!ACTION.test(input.action)) throw new Error(`audit action "${input.action}" must be dotted lower-case words (keys.create)`);
    const actor = {
      type: input.actor.type,
      ...(input.actor.id === undefined ? {} : { id: input.actor.id }),
      ...(input.actor.label === undefined ? {} : { label: input.actor.label }),
      ...(input.actor.token_id === undefined ? {} : { token_id: input.actor.token_id }),
    };
    return this.store.append((head) =>
      this.sealed(head, {
        actor,
        action: input.action,
        target: input.target ? { type: input.target.type, id: input.target.id, ...(input.target.team !== undefined ? { team: input.target.team } : {}) } : null,
        changes: input.changes === undefined ? null : scrubChanges(input.changes),
        outcome: input.outcome,
        address: input.address ?? null,
        user_agent: input.userAgent ?? null,
      }),
    );
  }

  /** The event with its place in the chain: id, seq and time, the head's hash and its own. */
  private sealed(head: ChainHead | undefined, fields: Omit<AuditEvent, 'id' | 'seq' | 'time' | 'prev_hash' | 'hash'>): AuditEvent {
    const now = this.clock.now();
    const event = { id: timeOrderedId(now), seq: (head?.seq ?? 0) + 1, time: new Date(now).toISOString(), ...fields, prev_hash: head?.hash ?? GENESIS_HASH };
    return { ...event, hash: eventHash(event) };
  }

  /** Newest first, filtered, a page at a time. */
  async list(query: AuditListQuery = {}): Promise<AuditPage> {
    const limit = Math.min(Math.max(1, query.limit ?? DEFAULT_LIMIT), MAX_LIMIT);
    const beforeSeq = query.cursor === undefined ? undefined : seqOfCursor(query.cursor);
    const rows = await this.store.list({ actor: query.actor, action: query.action, target: query.target, since: query.since, until: query.until, beforeSeq, limit: limit + 1, ...(query.teams ? { teams: query.teams } : {}) });
    const data = rows.slice(0, limit);
    return { data, next_cursor: rows.length > limit ? cursorOf(data[data.length - 1].seq) : null };
  }

  /** Every event, oldest first. */
  async *events(): AsyncGenerator<AuditEvent> {
    let after = 0;
    for (;;) {
      const page = await this.store.range(after, PAGE);
      yield* page;
      if (page.length < PAGE) return;
      after = page[page.length - 1].seq;
    }
  }

  /** The whole chain as JSON Lines, oldest first: one event per line, as `GET /admin/audit` shows it. */
  export(): Readable {
    const events = this.events();
    return Readable.from(
      (async function* () {
        for await (const event of events) yield `${JSON.stringify(event)}\n`;
      })(),
    );
  }

  /** Recomputes the chain from its start (the genesis, or the anchor the newest retention event recorded). */
  async verify(): Promise<VerifyResult> {
    const retention = await this.store.lastOfAction(RETENTION_ACTION);
    const through = retention?.changes?.removed_through_seq?.after;
    const anchor = retention?.changes?.anchor_hash?.after;
    const start = typeof through === 'number' && typeof anchor === 'string' ? { seq: through, hash: anchor } : undefined;
    return verifyChain(this.events(), start);
  }

  /**
   * Removes the months older than the retention keeps (whole months, from the chain's start) and
   * appends an `audit.retention` event naming the last removed event's seq and hash, the anchor
   * verification starts from. Resolves with that event, or undefined when nothing was old enough.
   */
  async retain(): Promise<AuditEvent | undefined> {
    if (this.retentionMonths <= 0) return undefined;
    const cutoff = monthStart(this.clock.now(), this.retentionMonths);
    return this.store.removeBefore(cutoff, (removed: RemovedSegment, head: ChainHead) =>
      this.sealed(head, {
        actor: { type: 'system', label: 'retention' },
        action: RETENTION_ACTION,
        target: { type: 'audit-segment', id: `before-${new Date(cutoff).toISOString().slice(0, 7)}` },
        changes: {
          removed_events: { after: removed.count },
          removed_through_seq: { after: removed.throughSeq },
          anchor_hash: { after: removed.anchorHash },
          removed_before: { after: new Date(cutoff).toISOString() },
        },
        outcome: 'success',
        address: null,
        user_agent: null,
      }),
    );
  }

  /** Runs retention now and every `intervalMs` (unreferenced: it keeps no process alive). */
  startRetention(intervalMs: number, onError: (error: Error) => void): void {
    if (this.retentionMonths <= 0 || this.retention) return;
    const run = () => {
      this.retaining ??= this.retain()
        .catch(onError)
        .finally(() => (this.retaining = undefined));
    };
    run();
    this.retention = setInterval(run, intervalMs);
    this.retention.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.retention);
    this.retention = undefined;
    await this.retaining;
    await this.store.close();
  }
}
