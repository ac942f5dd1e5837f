import KeyvRedis, { type RedisClientType } from '@keyv/redis';
import Keyv from 'keyv';
import { connectRedis, type RedisConnection } from '../store/redis-connect.js';
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

  private constructor(
    private readonly connection: RedisConnection,
    private readonly prefix: string,
  ) {
    this.entries = new Keyv<CacheEntry>({ store: new KeyvRedis(connection.keyvClient as RedisClientType, { throwOnErrors: true }), namespace: `${prefix}:cache`, useKeyPrefix: false, throwOnErrors: true, ...RAW_JSON } as never);
    this.vectors = new RedisVectorLog(connection, `${prefix}:cache-vectors:`);
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
