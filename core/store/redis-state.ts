import KeyvRedis, { type RedisClientType } from '@keyv/redis';
import Keyv from 'keyv';
import { RedisQuotaStore } from './quota-redis.js';
import { connectRedis, failingCleanly, type RedisConnection } from './redis-connect.js';
import type { QuotaStore } from './quota-state.js';
import { type Admission, type AdmissionResult, CONCURRENCY_LEASE_MS, type InvalidationEvent, RESERVATION_LEASE_MS, type LevelCounts, type RefusalReason, type Settlement, type SharedState } from './state.js';

const REASONS: readonly RefusalReason[] = ['requests_per_minute', 'requests_per_day', 'tokens_per_minute', 'max_concurrent', 'budget'];

/** Keys and arguments each level adds to {@link ADMIT}. */
const ADMIT_KEYS_PER_LEVEL = 9;
const ADMIT_ARGS_PER_LEVEL = 8;

/**
 * Checks every limit of every level of one request, then (only when all admit it) counts it at each,
 * atomically: one Lua script, one round trip. Per level, KEYS: minute window, day and total request
 * counters, spent, reserved, token window (members `<request id>|<tokens>`), its running sum, requests
 * in flight (members scored by their lease's end), the reservations' leases (members `<request
 * id>|<nanos>` scored by their lease's end: the expired ones are released from `reserved` before the
 * budget is checked); ARGV (after the request's nine: now, id, reservation, ceiling, tokens, ms until
 * the day ends, concurrency lease, level count, reservation lease): requests per minute and day,
 * tokens per minute, concurrency, budget (-1: none), the reservation's lifetime, and whether the day
 * and total counters are kept. Returns {0, reserved, then per level: minute count, ms until its
 * oldest request leaves, tokens in the window, ms until its oldest tokens leave}, or {reason 1-5,
 * level index, retry after ms, count, spent, reserved} (1 rpm, 2 rpd, 3 tpm, 4 concurrency, 5 budget).
 */
const ADMIT = `
local now = tonumber(ARGV[1])
local id = ARGV[2]
local reservation = tonumber(ARGV[3])
local ceiling = ARGV[4] == '1'
local tokens = tonumber(ARGV[5])
local untilDayEnds = tonumber(ARGV[6])
local lease = tonumber(ARGV[7])
local n = tonumber(ARGV[8])
local reservationLease = tonumber(ARGV[9])
local function tokensOf(member) return tonumber(string.match(member, '|(%d+)$')) end
local counts = {}
for i = 0, n - 1 do
  local k, a = i * ${ADMIT_KEYS_PER_LEVEL}, 9 + i * ${ADMIT_ARGS_PER_LEVEL}
  local rpm, rpd, tpm = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local concurrency, budget = tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
  local minute, used = 0, 0
  if rpm >= 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[k + 1], '-inf', now - 60000)
    minute = redis.call('ZCARD', KEYS[k + 1])
    if minute >= rpm then
      local oldest = redis.call('ZRANGE', KEYS[k + 1], 0, 0, 'WITHSCORES')
      local wait = 60000
      if oldest[2] then wait = tonumber(oldest[2]) + 60000 - now end
      return {1, i, wait, minute, 0, 0}
    end
  end
  if rpd >= 0 then
    local day = tonumber(redis.call('GET', KEYS[k + 2]) or '0')
    if day >= rpd then return {2, i, untilDayEnds, day, 0, 0} end
  end
  if tpm >= 0 then
    local window, sum = KEYS[k + 6], KEYS[k + 7]
    local old = redis.call('ZRANGEBYSCORE', window, '-inf', now - 60000)
    if #old > 0 then
      local gone = 0
      for _, member in ipairs(old) do gone = gone + tokensOf(member) end
      redis.call('ZREMRANGEBYSCORE', window, '-inf', now - 60000)
      redis.call('DECRBY', sum, gone)
    end
    used = tonumber(redis.call('GET', sum) or '0')
    if used + tokens > tpm then
      local wait = 60000
      if tokens <= tpm then
        local entries = redis.call('ZRANGE', window, 0, -1, 'WITHSCORES')
        local freed = 0
        for j = 1, #entries, 2 do
          freed = freed + tokensOf(entries[j])
          if used - freed + tokens <= tpm then wait = tonumber(entries[j + 1]) + 60000 - now break end
        end
      end
      return {3, i, wait, used, 0, 0}
    end
  end
  if concurrency >= 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[k + 8], '-inf', now)
    local flying = redis.call('ZCARD', KEYS[k + 8])
    if flying >= concurrency then return {4, i, 1000, flying, 0, 0} end
  end
  if budget >= 0 then
    local spent = tonumber(redis.call('GET', KEYS[k + 4]) or '0')
    local reserved = tonumber(redis.call('GET', KEYS[k + 5]) or '0')
    local expired = redis.call('ZRANGEBYSCORE', KEYS[k + 9], '-inf', now)
    if #expired > 0 then
      local gone = 0
      for _, member in ipairs(expired) do gone = gone + tokensOf(member) end
      redis.call('ZREMRANGEBYSCORE', KEYS[k + 9], '-inf', now)
      gone = math.min(gone, math.max(reserved, 0))
      if gone > 0 then reserved = redis.call('DECRBY', KEYS[k + 5], gone) end
    end
    local room = budget - spent - reserved
    if ceiling then reservation = math.min(reservation, math.max(room, 0)) end
    if reservation > room or room <= 0 then return {5, i, 0, 0, spent, reserved} end
  end
  counts[i + 1] = {minute, used}
end
local out = {0, reservation}
for i = 0, n - 1 do
  local k, a = i * ${ADMIT_KEYS_PER_LEVEL}, 9 + i * ${ADMIT_ARGS_PER_LEVEL}
  local minute, used = counts[i + 1][1], counts[i + 1][2]
  local minuteReset, tokensReset = 0, 0
  if tonumber(ARGV[a + 1]) >= 0 then
    redis.call('ZADD', KEYS[k + 1], now, id)
    redis.call('PEXPIRE', KEYS[k + 1], 61000)
    minute = minute + 1
    local oldest = redis.call('ZRANGE', KEYS[k + 1], 0, 0, 'WITHSCORES')
    minuteReset = tonumber(oldest[2]) + 60000 - now
  end
  if ARGV[a + 7] == '1' then
    redis.call('INCR', KEYS[k + 2])
    redis.call('PEXPIRE', KEYS[k + 2], untilDayEnds + 86400000)
  end
  if ARGV[a + 8] == '1' then redis.call('INCR', KEYS[k + 3]) end
  if tonumber(ARGV[a + 3]) >= 0 then
    redis.call('ZADD', KEYS[k + 6], now, id .. '|' .. tokens)
    redis.call('INCRBY', KEYS[k + 7], tokens)
    redis.call('PEXPIRE', KEYS[k + 6], 61000)
    redis.call('PEXPIRE', KEYS[k + 7], 61000)
    used = used + tokens
    local oldest = redis.call('ZRANGE', KEYS[k + 6], 0, 0, 'WITHSCORES')
    tokensReset = tonumber(oldest[2]) + 60000 - now
  end
  if tonumber(ARGV[a + 4]) >= 0 then
    redis.call('ZADD', KEYS[k + 8], now + lease, id)
    redis.call('PEXPIRE', KEYS[k + 8], lease)
  end
  if tonumber(ARGV[a + 5]) >= 0 and reservation > 0 then
    redis.call('INCRBY', KEYS[k + 5], reservation)
    redis.call('ZADD', KEYS[k + 9], now + reservationLease, id .. '|' .. reservation)
    if tonumber(ARGV[a + 6]) > 0 then
      redis.call('PEXPIRE', KEYS[k + 5], ARGV[a + 6])
      redis.call('PEXPIRE', KEYS[k + 9], ARGV[a + 6])
    end
  end
  out[#out + 1] = minute
  out[#out + 1] = minuteReset
  out[#out + 1] = used
  out[#out + 1] = tokensReset
end
return out
`;

/**
 * Settles every level atomically: releases the reservation (only if its lease member is still there,
 * or ARGV[7] says it has none; never below 0), adds the actual cost to each spent counter, replaces
 * the request's token estimate by its actual tokens (while it is still in the window) and ends its
 * request in flight. Per level, KEYS: reserved, token window, its sum, in flight, the reservations'
 * leases, then its spent counters; ARGV: whether each of the first three is kept, the number of spent
 * counters and their lifetimes. The ARGV after the last level are indexes (into KEYS) of the spent
 * counters whose values are returned.
 */
const SETTLE = `
local reservation, actual, id = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local estimate, tokens, n = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
local unleased = ARGV[7] == '1'
local k, a = 0, 7
local values = {}
for i = 1, n do
  local spentCount = tonumber(ARGV[a + 4])
  if ARGV[a + 1] == '1' and reservation ~= 0 and (unleased or redis.call('ZREM', KEYS[k + 5], id .. '|' .. reservation) == 1) then
    -- Below 0 only when the counter held less (its period ended): it reads as 0 without the key.
    if redis.call('DECRBY', KEYS[k + 1], reservation) < 0 then redis.call('DEL', KEYS[k + 1]) end
  end
  if ARGV[a + 2] == '1' and tokens >= 0 then
    local old = id .. '|' .. estimate
    local score = redis.call('ZSCORE', KEYS[k + 2], old)
    if score then
      redis.call('ZREM', KEYS[k + 2], old)
      redis.call('ZADD', KEYS[k + 2], score, id .. '|' .. tokens)
      redis.call('INCRBY', KEYS[k + 3], tokens - tonumber(estimate))
    end
  end
  if ARGV[a + 3] == '1' then redis.call('ZREM', KEYS[k + 4], id) end
  for j = 1, spentCount do
    local index = k + 5 + j
    values[index] = redis.call('INCRBY', KEYS[index], actual)
    local ttl = tonumber(ARGV[a + 4 + j])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[index], ttl) end
  end
  k = k + 5 + spentCount
  a = a + 4 + spentCount
end
local out = {}
for j = a + 1, #ARGV do out[#out + 1] = values[tonumber(ARGV[j])] or 0 end
return out
`;

/** Sets a claim only when absent; releases only the owner's claim. */
/** Sets the lease for ARGV[1] when it is free, extends it when ARGV[1] holds it; 1 when ARGV[1] holds it after. */
const LEASE = `local holder = redis.call('GET', KEYS[1])
if holder == false then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
return 0`;
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
  /**
   * Takes (or, for its holder, extends) the lease `<prefix>:<name>:lease:<field>` for `ttlMs`:
   * true when `owner` holds it now. One key, so it works on a cluster as on one server.
   */
  lease(field: string, owner: string, ttlMs: number): Promise<boolean>;
}

/**
 * The shared store: records through @keyv/redis, limits through Lua scripts on the same
 * connection, invalidation through pub/sub on a second one. Every key starts with `prefix`, so
 * several deployments (or test runs) can share one Redis. On a Redis Cluster the counters that one
 * admission or settlement touches (every level's) carry one hash tag, `{<prefix>:counters}`, so
 * that each script runs on one node, atomically (docs/deployment.md: key families and tags).
 */
export class RedisState implements SharedState {
  readonly kind = 'redis' as const;
  readonly records: Keyv;
  readonly quota: QuotaStore;
  private readonly handlers: Array<(event: InvalidationEvent) => void> = [];
  private readonly client: RedisClientType;
  private readonly counterPrefix: string;

  private constructor(
    private readonly connection: RedisConnection,
    private readonly prefix: string,
  ) {
    this.client = failingCleanly(connection.commands);
    this.counterPrefix = connection.mode === 'cluster' ? `${prefix}:{${prefix}:counters}:` : `${prefix}:`;
    // Keyv hands its namespace to the adapter, which stores keys as `<prefix>::<key>`. A record
    // that cannot be read fails the request (503 during a failover) rather than reading as absent.
    const store = new KeyvRedis(failingCleanly(connection.keyvClient as RedisClientType), { throwOnErrors: true });
    this.records = new Keyv({ store, namespace: prefix, useKeyPrefix: false, throwOnErrors: true } as never);
    this.quota = new RedisQuotaStore(this.client, (name) => this.key(name));
  }

  /** Connects to `url` (one server, a cluster or Sentinel: core/store/redis-connect.ts). */
  static async connect(url: string, prefix: string): Promise<RedisState> {
    const connection = await connectRedis(url);
    if (connection.mode === 'cluster' && /[{}]/.test(prefix)) {
      await connection.close();
      throw new Error(`GATEWAY_REDIS_PREFIX "${prefix}" has a brace: on a Redis Cluster braces are hash tags, which would put every key on one node`);
    }
    const state = new RedisState(connection, prefix);
    await connection.subscribe(state.channel, (message) => {
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

  /** A counter's key: in one hash slot with every other counter on a cluster. */
  private counter(name: string): string {
    return this.counterPrefix + name;
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
    const keys: string[] = [];
    const args: string[] = [
      String(admission.now),
      admission.requestId,
      String(admission.reservationNanos),
      admission.reservationIsCeiling ? '1' : '0',
      String(admission.tokens),
      String(admission.msUntilDayEnds),
      String(admission.leaseMs ?? CONCURRENCY_LEASE_MS),
      String(admission.levels.length),
      String(admission.reservationLeaseMs ?? RESERVATION_LEASE_MS),
    ];
    for (const level of admission.levels) {
      keys.push(
        this.counter(level.minuteWindowKey),
        this.counter(level.dayCounterKey ?? level.minuteWindowKey),
        this.counter(level.totalCounterKey ?? level.minuteWindowKey),
        this.counter(level.spentKey),
        this.counter(level.reservedKey),
        this.counter(level.tokensWindowKey),
        this.counter(`${level.tokensWindowKey}:sum`),
        this.counter(level.concurrentKey),
        this.counter(`${level.reservedKey}:leases`),
      );
      args.push(
        String(level.requestsPerMinute ?? -1),
        String(level.requestsPerDay ?? -1),
        String(level.tokensPerMinute ?? -1),
        String(level.maxConcurrent ?? -1),
        String(level.budgetNanos ?? -1),
        String(level.periodTtlMs ?? 0),
        level.dayCounterKey === undefined ? '0' : '1',
        level.totalCounterKey === undefined ? '0' : '1',
      );
    }
    const reply = ((await this.client.eval(ADMIT, { keys, arguments: args })) as number[]).map(Number);
    if (reply[0] === 0) {
      const levels: LevelCounts[] = [];
      for (let index = 2; index < reply.length; index += 4) {
        levels.push({ minuteCount: reply[index]!, minuteResetMs: reply[index + 1]!, tokensInWindow: reply[index + 2]!, tokensResetMs: reply[index + 3]! });
      }
      return { admitted: true, reservedNanos: reply[1]!, levels };
    }
    const [status, level, retryAfterMs, count, spentNanos, reservedNanos] = reply as [number, number, number, number, number, number];
    return { admitted: false, level, reason: REASONS[status - 1]!, retryAfterMs, count, spentNanos, reservedNanos };
  }

  async settle(settlement: Settlement): Promise<number[] | undefined> {
    const keys: string[] = [];
    const args: string[] = [
      String(settlement.reservationNanos),
      String(settlement.actualNanos),
      settlement.requestId,
      String(settlement.estimatedTokens),
      String(settlement.actualTokens ?? -1),
      String(settlement.levels.length),
      settlement.unleased ? '1' : '0',
    ];
    const indexOf = new Map<string, number>();
    for (const level of settlement.levels) {
      const placeholder = level.spent[0]?.key ?? level.reservedKey ?? level.tokensWindowKey ?? level.concurrentKey ?? 'none';
      keys.push(
        this.counter(level.reservedKey ?? placeholder),
        this.counter(level.tokensWindowKey ?? placeholder),
        this.counter(level.tokensWindowKey === undefined ? placeholder : `${level.tokensWindowKey}:sum`),
        this.counter(level.concurrentKey ?? placeholder),
        this.counter(level.reservedKey === undefined ? placeholder : `${level.reservedKey}:leases`),
      );
      args.push(level.reservedKey === undefined ? '0' : '1', level.tokensWindowKey === undefined ? '0' : '1', level.concurrentKey === undefined ? '0' : '1', String(level.spent.length));
      for (const counter of level.spent) {
        keys.push(this.counter(counter.key));
        indexOf.set(counter.key, keys.length);
        args.push(String(counter.ttlMs ?? 0));
      }
    }
    const report = settlement.report ?? [];
    for (const key of report) args.push(String(indexOf.get(key) ?? 0));
    const reply = (await this.client.eval(SETTLE, { keys, arguments: args })) as number[];
    return report.length === 0 ? undefined : reply.map(Number);
  }

  async read(counterKeys: readonly string[]): Promise<number[]> {
    if (counterKeys.length === 0) return [];
    const values = await this.client.mGet(counterKeys.map((key) => this.counter(key)));
    return values.map((value) => Number(value ?? 0));
  }

  async minuteCount(key: string, now: number): Promise<number> {
    return Number(await this.client.zCount(this.counter(key), now - 60_000 + 1, '+inf'));
  }

  async windowUsage(tokensKey: string, concurrentKey: string, now: number): Promise<{ tokens: number; inFlight: number }> {
    const [members, inFlight] = await Promise.all([
      this.client.zRangeByScore(this.counter(tokensKey), now - 60_000 + 1, '+inf'),
      this.client.zCount(this.counter(concurrentKey), now + 1, '+inf'),
    ]);
    const tokens = members.reduce((sum, member) => sum + Number(member.slice(member.lastIndexOf('|') + 1)), 0);
    return { tokens, inFlight: Number(inFlight) };
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
    await this.connection.subscribe(key, onMessage);
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
      lease: async (field, owner, ttlMs) => Number(await client.eval(LEASE, { keys: [`${key}:lease:${field}`], arguments: [owner, String(Math.max(1, Math.round(ttlMs)))] })) === 1,
    };
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
