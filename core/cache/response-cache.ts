import type { Logger } from 'pino';
import type { Clock } from '../spec/manifest.js';
import type { CacheEntry, CacheStore } from './store.js';
import { VectorIndex } from './vector-index.js';

/** What a write came to (counted in `gateway_cache_stores_total`). */
export type StoreResult = 'stored' | 'too_large' | 'failed';

/** The cache's counters besides those the log entry feeds (metrics). */
export interface CacheObserver {
  stored(result: StoreResult): void;
  evicted(count: number): void;
}

/** A stored answer found for a request, and how old it is (on the gateway's clock). */
export interface Found {
  readonly entry: CacheEntry;
  readonly ageMs: number;
  readonly similarity?: number;
}

/** A semantic lookup's question: where, the request's vector, and what a hit must share exactly. */
export interface Probe {
  readonly namespace: string;
  readonly partition: string;
  readonly vector: Float32Array;
  readonly guard: string;
}

export interface ResponseCacheOptions {
  readonly open: () => Promise<CacheStore>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Longest a store read or write may hold a request. */
  readonly timeoutMs: number;
  readonly maxEntryBytes: number;
  readonly semanticMaxEntries: number;
  readonly observer?: CacheObserver;
}

const TIMED_OUT = Symbol('timed out');

/** `work`, or a rejection once `ms` have passed (the work itself goes on and is ignored). */
export function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(TIMED_OUT), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The response cache's storage side: answers by key and the semantic index, over a `CacheStore`
 * (embedded or Redis). Every read and write is bounded by `timeoutMs` and never throws to the
 * request: a store that fails or lags makes a miss (or an answer not stored), logged at warn.
 * Ages are measured on the gateway's clock, so a test can move time.
 */
export class ResponseCache {
  readonly index: VectorIndex;
  private opened?: Promise<CacheStore>;

  constructor(private readonly options: ResponseCacheOptions) {
    this.index = new VectorIndex(options.semanticMaxEntries);
  }

  /** The store, opened on first use (or by `start`). */
  store(): Promise<CacheStore> {
    // A store that failed to open is tried again by the next request, not given up on for good.
    this.opened ??= this.options.open().catch((error: unknown) => {
      this.opened = undefined;
      throw error;
    });
    return this.opened;
  }

  /** Opens the store now (`listen` calls it), so that the first request does not wait for it. */
  async start(): Promise<void> {
    await this.store();
  }

  /** The answer stored under `key` when it is younger than `maxAgeMs`. */
  async get(key: string, maxAgeMs: number): Promise<Found | undefined> {
    const entry = await this.guarded('read', async () => (await this.store()).entries.get(key));
    if (entry === undefined || entry === null) return undefined;
    const ageMs = this.options.clock.now() - entry.storedAt;
    return ageMs < maxAgeMs ? { entry, ageMs: Math.max(0, ageMs) } : undefined;
  }

  /** Stores an answer for `ttlMs` unless it is over the entry cap; resolves when written (or given up on). */
  async put(key: string, entry: CacheEntry, ttlMs: number): Promise<StoreResult> {
    const text = JSON.stringify(entry);
    let result: StoreResult = 'stored';
    if (Buffer.byteLength(text) > this.options.maxEntryBytes) result = 'too_large';
    else {
      const written = await this.guarded('write', async () => {
        await (await this.store()).entries.set(key, text as never, ttlMs);
        return true;
      });
      if (written === undefined) result = 'failed';
    }
    this.options.observer?.stored(result);
    return result;
  }

  /**
   * The closest stored answer whose request's vector is at least `threshold` similar, shares the
   * probe's partition and guard, and is younger than `maxAgeMs`. The namespace's index is first
   * brought up to date with its log (what other instances, or this one before a restart, added).
   */
  async nearest(probe: Probe, threshold: number, maxAgeMs: number): Promise<Found | undefined> {
    const { namespace } = probe;
    const synced = await this.guarded('read', async () => {
      const records = await (await this.store()).vectors.since(namespace, this.index.cursor(namespace));
      this.index.apply(namespace, records);
      return true;
    });
    if (synced === undefined) return undefined;
    const candidate = this.index.search(namespace, probe.partition, probe.vector, threshold, probe.guard);
    if (candidate === undefined) return undefined;
    const found = await this.get(candidate.ref, maxAgeMs);
    // Its answer expired or was evicted: the vector goes too.
    if (found === undefined) this.index.remove(namespace, candidate.ref);
    return found && { ...found, similarity: candidate.similarity };
  }

  /** Adds a stored answer's vector to its namespace's index (through the log, which every instance reads). */
  async indexVector(probe: Probe, ref: string): Promise<void> {
    const { namespace, partition, guard, vector } = probe;
    await this.guarded('write', async () => (await this.store()).vectors.append(namespace, { partition, ref, guard, vector }, this.options.semanticMaxEntries));
  }

  /** Deletes a namespace's answers and vectors, or everyone's; returns how many answers. */
  async remove(namespace: string | undefined): Promise<number> {
    const store = await this.store();
    const deleted = namespace === undefined ? await store.clear() : await store.deleteNamespace(namespace);
    await store.vectors.clear(namespace);
    this.index.drop(namespace);
    return deleted;
  }

  async close(): Promise<void> {
    if (this.opened) await (await this.opened.catch(() => undefined))?.close();
  }

  /** Runs a store operation within the time limit; undefined (and a warning) when it fails or lags. */
  private async guarded<T>(kind: 'read' | 'write', work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await within(work(), this.options.timeoutMs);
    } catch (error) {
      const reason = error === TIMED_OUT ? `took over ${this.options.timeoutMs} ms` : (error as Error)?.message;
      this.options.logger.warn({ cache: { operation: kind, reason } }, 'response cache skipped');
      return undefined;
    }
  }
}
