import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import Keyv from 'keyv';
import { SqliteKeyvStore } from '../store/sqlite-keyv.js';
import type { QuotaAcquire, QuotaGrant, QuotaRelease, QuotaSnapshot, QuotaStore } from '../store/quota-state.js';
import type { Admission, AdmissionResult, InvalidationEvent, Settlement, SharedState } from '../store/state.js';
import type { Channel } from './channel.js';

/**
 * The embedded store as seen from one of several worker processes (`GATEWAY_WORKERS`): records
 * (credentials, keys, routes, dashboard sessions) are read and written in the shared SQLite file
 * directly (WAL lets several processes do so safely), while everything that must be counted or
 * claimed once for all workers (limit counters, unique names, index sets) and the invalidation bus
 * go to the primary process, which holds the one {@link SqliteState} that is their authority.
 */
export class WorkerState implements SharedState {
  readonly kind = 'embedded' as const;
  readonly records: Keyv;
  /** Quota windows are the primary's, like the limit counters; a release is one way. */
  readonly quota: QuotaStore = {
    acquire: (acquire: QuotaAcquire): Promise<QuotaGrant> => this.primary.request('quotaAcquire', acquire),
    release: async (release: QuotaRelease): Promise<void> => this.primary.emit('quotaRelease', release),
    snapshot: (key: string, now: number, windowMs: number): Promise<QuotaSnapshot> => this.primary.request('quotaSnapshot', key, now, windowMs),
  };
  private readonly database: DatabaseSync;
  private readonly handlers: Array<(event: InvalidationEvent) => void> = [];

  constructor(
    dataDir: string,
    private readonly primary: Channel,
  ) {
    // The primary created the file (and its tables) before it started any worker.
    this.database = new DatabaseSync(join(dataDir, 'gateway.sqlite'));
    this.database.exec('PRAGMA busy_timeout = 5000;');
    this.records = new Keyv({ store: new SqliteKeyvStore(this.database), useKeyPrefix: false });
    primary.on<InvalidationEvent>('invalidate', (event) => {
      for (const handler of this.handlers) handler(event);
    });
  }

  claim(name: string, owner: string): Promise<boolean> {
    return this.primary.request('claim', name, owner);
  }

  release(name: string, owner: string): Promise<void> {
    return this.primary.request('release', name, owner);
  }

  addToSet(set: string, member: string): Promise<void> {
    return this.primary.request('addToSet', set, member);
  }

  removeFromSet(set: string, member: string): Promise<void> {
    return this.primary.request('removeFromSet', set, member);
  }

  members(set: string): Promise<string[]> {
    return this.primary.request('members', set);
  }

  admit(admission: Admission): Promise<AdmissionResult> {
    return this.primary.request('admit', admission);
  }

  /**
   * One way: nothing waits for the primary. Messages of one worker arrive in order, so its next
   * admission already sees this cost.
   */
  async settle(settlement: Settlement): Promise<number[] | undefined> {
    this.primary.emit('settle', settlement);
    // The spend is the primary's: whoever needs it reads it.
    return undefined;
  }

  read(counterKeys: readonly string[]): Promise<number[]> {
    return this.primary.request('read', counterKeys);
  }

  windowUsage(tokensKey: string, concurrentKey: string, now: number): Promise<{ tokens: number; inFlight: number }> {
    return this.primary.request('windowUsage', tokensKey, concurrentKey, now);
  }

  minuteCount(key: string, now: number): Promise<number> {
    return this.primary.request('minuteCount', key, now);
  }

  /** The primary sends the event to every worker, this one included. */
  publish(event: InvalidationEvent): Promise<void> {
    return this.primary.request('publish', event);
  }

  subscribe(handler: (event: InvalidationEvent) => void): void {
    this.handlers.push(handler);
  }

  async close(): Promise<void> {
    if (this.database.isOpen) this.database.close();
  }
}
