import KeyvRedis, { createClient, type RedisClientType } from '@keyv/redis';
import Keyv from 'keyv';
import { RedisQuotaStore } from './quota-redis.js';
import type { QuotaStore } from './quota-state.js';
import type { Admission, AdmissionResult, InvalidationEvent, Settlement, SharedState } from './state.js';

/**
 * Checks every limit of one request and counts it, atomically (one Lua script). Returns
 * {status, value, a, b}: status 0 admitted (value = reserved, a = minute count, b = day count), 1 per-minute limit
 * (value = ms until a slot frees), 2 per-day limit, 3 budget (a = spent, b = reserved).
 */
const ADMIT = `
local now = tonumber(ARGV[1])
local rpm = tonumber(ARGV[2])
local rpd = tonumber(ARGV[3])
local budget = tonumber(ARGV[4])
local reservation = 0
if tonumber(ARGV[4]) >= 0 then reservation = tonumber(ARGV[5]) end
local minuteCount = 0
if rpm >= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
  minuteCount = redis.call('ZCARD', KEYS[1])
  if minuteCount >= rpm then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return {1, tonumber(oldest[2]) + 60000 - now, minuteCount, 0}
  end
end
local dayCount = tonumber(redis.call('GET', KEYS[2]) or '0')
if rpd >= 0 and dayCount >= rpd then
  return {2, tonumber(ARGV[8]), dayCount, 0}
end
if budget >= 0 then
  local spent = tonumber(redis.call('GET', KEYS[4]) or '0')
  local reserved = tonumber(redis.call('GET', KEYS[5]) or '0')
  local room = budget - spent - reserved
  if ARGV[9] == '1' then reservation = math.min(reservation, math.max(room, 0)) end
  if reservation > room or room <= 0 then
    return {3, 0, spent, reserved}
  end
  redis.call('INCRBY', KEYS[5], reservation)
  if tonumber(ARGV[7]) > 0 then redis.call('PEXPIRE', KEYS[5], ARGV[7]) end
end
if rpm >= 0 then
  redis.call('ZADD', KEYS[1], now, ARGV[6])
  redis.call('PEXPIRE', KEYS[1], 61000)
end
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[8]) + 86400000)
redis.call('INCR', KEYS[3])
return {0, reservation, minuteCount + 1, dayCount + 1}
`;

/** Releases a reservation and adds the actual cost to each spend counter, atomically. */
const SETTLE = `
if tonumber(ARGV[1]) ~= 0 then redis.call('DECRBY', KEYS[1], ARGV[1]) end
local report = tonumber(ARGV[#KEYS + 2] or '0')
local reported = -1
for index = 2, #KEYS do
  local value = redis.call('INCRBY', KEYS[index], ARGV[2])
  if index == report then reported = value end
  local ttl = tonumber(ARGV[index + 1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[index], ttl) end
end
return reported
`;

/** Sets a claim only when absent; releases only the owner's claim. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** A pub/sub channel and a hash under the state's prefix, on its connections, for other shared state (routing breakers). */
export interface RedisChannel {
  /** Sends a message to every instance's subscriber (this one's included). */
  publish(message: string): Promise<void>;
  /** Sets fields of the hash. */
  set(fields: Record<string, string>): Promise<void>;
  /** Removes fields of the hash. */
  remove(fields: readonly string[]): Promise<void>;
  /** Every field of the hash. */
  all(): Promise<Record<string, string>>;
}

/**
 * The shared store: records through @keyv/redis, limits through Lua scripts on the same
 * connection, invalidation through pub/sub on a second one. Every key starts with `prefix`, so
 * several deployments (or test runs) can share one Redis.
 */
export class RedisState implements SharedState {
  readonly kind = 'redis' as const;
  readonly records: Keyv;
  readonly quota: QuotaStore;
  private readonly handlers: Array<(event: InvalidationEvent) => void> = [];

  private constructor(
    private readonly client: RedisClientType,
    private readonly subscriber: RedisClientType,
    private readonly prefix: string,
  ) {
    // Keyv hands its namespace to the adapter, which stores keys as `<prefix>::<key>`.
    this.records = new Keyv({ store: new KeyvRedis(client), namespace: prefix, useKeyPrefix: false });
    this.quota = new RedisQuotaStore(client, (name) => this.key(name));
  }

  static async connect(url: string, prefix: string): Promise<RedisState> {
    const client = createClient({ url }) as RedisClientType;
    client.on('error', () => {}); // reconnects by itself; failed commands surface to their caller
    await client.connect();
    const subscriber = client.duplicate() as RedisClientType;
    subscriber.on('error', () => {});
    await subscriber.connect();
    const state = new RedisState(client, subscriber, prefix);
    await subscriber.subscribe(state.channel, (message) => {
      let event: InvalidationEvent;
      try {
        event = JSON.parse(message) as InvalidationEvent;
      } catch {
        return;
      }
      for (const handler of state.handlers) handler(event);
    });
    return state;
  }

  private get channel(): string {
    return `${this.prefix}:events`;
  }

  private key(name: string): string {
    return `${this.prefix}:${name}`;
  }

  async claim(name: string, owner: string): Promise<boolean> {
    const reply = await this.client.set(this.key(`claim:${name}`), owner, { condition: 'NX' });
    if (reply === 'OK') return true;
    return (await this.client.get(this.key(`claim:${name}`))) === owner;
  }

  async release(name: string, owner: string): Promise<void> {
    await this.client.eval(RELEASE, { keys: [this.key(`claim:${name}`)], arguments: [owner] });
  }

  async addToSet(set: string, member: string): Promise<void> {
    await this.client.sAdd(this.key(`set:${set}`), member);
  }

  async removeFromSet(set: string, member: string): Promise<void> {
    await this.client.sRem(this.key(`set:${set}`), member);
  }

  async members(set: string): Promise<string[]> {
    return (await this.client.sMembers(this.key(`set:${set}`))).sort();
  }

  async admit(admission: Admission): Promise<AdmissionResult> {
    const reply = (await this.client.eval(ADMIT, {
      keys: [admission.minuteWindowKey, admission.dayCounterKey, admission.totalCounterKey, admission.spentKey, admission.reservedKey].map((key) =>
        this.key(key),
      ),
      arguments: [
        admission.now,
        admission.requestsPerMinute ?? -1,
        admission.requestsPerDay ?? -1,
        admission.budgetNanos ?? -1,
        admission.reservationNanos,
        admission.requestId,
        admission.periodTtlMs ?? 0,
        admission.msUntilDayEnds,
        admission.reservationIsCeiling ? 1 : 0,
      ].map(String),
    })) as number[];
    const [status, value, first, second] = reply.map(Number);
    if (status === 0) return { admitted: true, minuteCount: first, dayCount: second, reservedNanos: value };
    if (status === 1) return { admitted: false, reason: 'requests_per_minute', retryAfterMs: value, count: first };
    if (status === 2) return { admitted: false, reason: 'requests_per_day', retryAfterMs: value, count: first };
    return { admitted: false, reason: 'budget', spentNanos: first, reservedNanos: second };
  }

  async settle(settlement: Settlement): Promise<number | undefined> {
    // The reported counter by its index among the keys (1 is the reservation; 0: none).
    const report = settlement.report === undefined ? 0 : settlement.spent.findIndex((counter) => counter.key === settlement.report) + 2;
    const reported = await this.client.eval(SETTLE, {
      keys: [settlement.reservedKey, ...settlement.spent.map((counter) => counter.key)].map((key) => this.key(key)),
      arguments: [String(settlement.reservationNanos), String(settlement.actualNanos), ...settlement.spent.map((counter) => String(counter.ttlMs ?? 0)), String(report)],
    });
    return report < 2 ? undefined : Number(reported);
  }

  async read(counterKeys: readonly string[]): Promise<number[]> {
    if (counterKeys.length === 0) return [];
    const values = await this.client.mGet(counterKeys.map((key) => this.key(key)));
    return values.map((value) => Number(value ?? 0));
  }

  async minuteCount(key: string, now: number): Promise<number> {
    return Number(await this.client.zCount(this.key(key), now - 60_000 + 1, '+inf'));
  }

  async publish(event: InvalidationEvent): Promise<void> {
    // Applied here at once; the echo from Redis is a harmless second invalidation.
    for (const handler of this.handlers) handler(event);
    await this.client.publish(this.channel, JSON.stringify(event));
  }

  subscribe(handler: (event: InvalidationEvent) => void): void {
    this.handlers.push(handler);
  }

  /** Opens `<prefix>:<name>` as a channel (its messages go to `onMessage`) and as a hash, on this state's two connections. */
  async openChannel(name: string, onMessage: (message: string) => void): Promise<RedisChannel> {
    const key = this.key(name);
    await this.subscriber.subscribe(key, onMessage);
    const client = this.client;
    return {
      publish: async (message) => {
        await client.publish(key, message);
      },
      set: async (fields) => {
        if (Object.keys(fields).length > 0) await client.hSet(key, fields);
      },
      remove: async (fields) => {
        if (fields.length > 0) await client.hDel(key, [...fields]);
      },
      all: () => client.hGetAll(key),
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.subscriber.close(), this.client.close()]);
  }
}
