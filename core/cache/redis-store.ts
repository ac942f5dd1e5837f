import KeyvRedis, { type RedisClientType } from '@keyv/redis';
import Keyv from 'keyv';
import { connectRedis, type RedisConnection } from '../store/redis-connect.js';
import type { Leases } from './leases.js';
import { type CacheEntry, type CacheStore, floats, RAW_JSON, type VectorLog, type VectorRecord } from './store.js';

/** `*`, `?`, `[`, `]` and `\` matched literally in a SCAN pattern. */
const globLiteral = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * The shared store: entries through @keyv/redis under `<prefix>:cache::<namespace>/<digest>`, with
 * their TTL as Redis expiry (Redis's `maxmemory` policy caps the size); each namespace's semantic
 * index is a Redis stream `<prefix>:cache-vectors:<namespace>`, trimmed to its bound by XADD.
 * Commands fail at once while the connection is down (no offline queue), so the cache is skipped
 * rather than requests held. Every key is used alone, so on a Redis Cluster entries and streams
 * spread over the nodes by their own keys; clearing scans every primary.
 */
export class RedisCacheStore implements CacheStore {
  readonly kind = 'redis' as const;
  readonly entries: Keyv<CacheEntry>;
  readonly vectors: VectorLog;
  readonly leases: RedisLeases;

  private constructor(
    private readonly connection: RedisConnection,
    private readonly prefix: string,
  ) {
    this.entries = new Keyv<CacheEntry>({ store: new KeyvRedis(connection.keyvClient as RedisClientType, { throwOnErrors: true }), namespace: `${prefix}:cache`, useKeyPrefix: false, throwOnErrors: true, ...RAW_JSON } as never);
    this.vectors = new RedisVectorLog(connection, `${prefix}:cache-vectors:`);
    this.leases = new RedisLeases(connection, prefix);
  }

  static async connect(url: string, prefix: string): Promise<RedisCacheStore> {
    return new RedisCacheStore(await connectRedis(url, { offlineQueue: false }), prefix);
  }

  deleteNamespace(namespace: string): Promise<number> {
    return this.unlinkMatching(`${globLiteral(this.prefix)}:cache::${globLiteral(namespace)}/*`);
  }

  clear(): Promise<number> {
    return this.unlinkMatching(`${globLiteral(this.prefix)}:cache::*`);
  }

  private async unlinkMatching(pattern: string): Promise<number> {
    let deleted = 0;
    for await (const keys of this.connection.scan(pattern)) deleted += await this.connection.unlink(keys);
    return deleted;
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => {});
  }
}

/**
 * Deletes (or extends) a lease only for its holder's token. The release's channel is an argument,
 * not a key: a script's keys are its lease alone (one hash slot, as Redis Cluster needs).
 */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]); redis.call('publish', ARGV[3], ARGV[2]); end return 0`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]); end return 0`;

/**
 * Leases as `<prefix>:cache-lease:<key>` (SET NX PX, the holder's token as value); a release is
 * published on `<prefix>:cache-released` (the key as message), which each instance hears on one
 * subscriber connection, opened when it first waits.
 */
class RedisLeases implements Leases {
  // Releases are heard through pub/sub: polling only notices a lease expiring (its holder died).
  readonly pollMs = 250;
  private subscribed?: Promise<void>;
  private readonly listeners = new Set<(key: string) => void>();
  private readonly channel: string;
  private readonly client: RedisClientType;

  constructor(
    private readonly connection: RedisConnection,
    private readonly prefix: string,
  ) {
    this.channel = `${prefix}:cache-released`;
    this.client = connection.commands;
  }

  private key(key: string): string {
    return `${this.prefix}:cache-lease:${key}`;
  }

  async acquire(key: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.client.set(this.key(key), token, { condition: 'NX', expiration: { type: 'PX', value: ttlMs } })) === 'OK';
  }

  async renew(key: string, token: string, ttlMs: number): Promise<void> {
    await this.client.eval(RENEW, { keys: [this.key(key)], arguments: [token, String(ttlMs)] });
  }

  async release(key: string, token: string): Promise<void> {
    await this.client.eval(RELEASE, { keys: [this.key(key)], arguments: [token, key, this.channel] });
  }

  async held(key: string): Promise<boolean> {
    return (await this.client.exists(this.key(key))) > 0;
  }

  /** Subscribes on the connection's subscriber (a cluster's or Sentinel's too), once; a subscription that failed is tried again by the next wait. */
  subscribe(listener: (key: string) => void): Promise<void> {
    this.listeners.add(listener);
    this.subscribed ??= this.connection.subscribe(this.channel, (message) => {
      for (const heard of this.listeners) heard(message);
    });
    return this.subscribed.catch((error: unknown) => {
      this.subscribed = undefined;
      throw error;
    });
  }
}

class RedisVectorLog implements VectorLog {
  private readonly client: RedisClientType;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keyPrefix: string,
  ) {
    this.client = connection.commands;
  }

  async append(namespace: string, record: Omit<VectorRecord, 'id'>, maxEntries: number): Promise<void> {
    const { partition, ref, guard, vector } = record;
    const encoded = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
    await this.client.xAdd(this.keyPrefix + namespace, '*', { partition, ref, guard, vector: encoded }, { TRIM: { strategy: 'MAXLEN', strategyModifier: '~', threshold: maxEntries } });
  }

  async since(namespace: string, after: string | undefined): Promise<VectorRecord[]> {
    const messages = await this.client.xRange(this.keyPrefix + namespace, after === undefined ? '-' : `(${after}`, '+');
    return messages.map(({ id, message }) => ({
      id,
      partition: String(message.partition),
      ref: String(message.ref),
      guard: String(message.guard),
      vector: floats(Buffer.from(String(message.vector), 'base64')),
    }));
  }

  async clear(namespace?: string): Promise<void> {
    if (namespace !== undefined) {
      await this.client.unlink(this.keyPrefix + namespace);
      return;
    }
    for await (const keys of this.connection.scan(`${globLiteral(this.keyPrefix)}*`)) await this.connection.unlink(keys);
  }
}
