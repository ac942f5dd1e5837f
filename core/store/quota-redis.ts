import type { RedisClientType } from '@keyv/redis';
import { type QuotaAcquire, type QuotaDimension, type QuotaGrant, type QuotaRelease, type QuotaSnapshot, type QuotaStore, snapshotOf, type TeamCounters, WINDOW_BUCKETS } from './quota-state.js';

/**
 * One quota is one hash: `w|<team>` weight, `s|<team>` when it last asked, `c|<team>` requests in
 * flight, `r|<team>|<bucket>` and `t|<team>|<bucket>` requests and tokens per bucket. The script
 * reads it whole (a few fields per team and bucket), drops what left the window, decides as
 * `decide` in quota-state.ts does, and counts. Returns {granted, bucket or dimension, scope, retry}.
 */
const ACQUIRE = `
local key = KEYS[1]
local team = ARGV[1]
local weight = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local windowMs = tonumber(ARGV[4])
local idle = tonumber(ARGV[5])
local cost = tonumber(ARGV[9])
local B = tonumber(ARGV[10])
local current = math.floor(now * B / windowMs)
local flat = redis.call('HGETALL', key)
local teams = {}
local stale = {}
local function entry(name)
  local e = teams[name]
  if not e then e = {w = 1, s = 0, c = 0, r = 0, t = 0}; teams[name] = e end
  return e
end
for i = 1, #flat, 2 do
  local field = flat[i]
  local value = tonumber(flat[i + 1])
  local kind = string.sub(field, 1, 1)
  local rest = string.sub(field, 3)
  if kind == 'r' or kind == 't' then
    local sep = string.find(rest, '|[^|]*$')
    local name = string.sub(rest, 1, sep - 1)
    local bucket = tonumber(string.sub(rest, sep + 1))
    if bucket < current - B then
      stale[#stale + 1] = field
    else
      local e = entry(name)
      e[kind] = e[kind] + value
      local o = 'o' .. kind
      if value > 0 and (e[o] == nil or bucket < e[o]) then e[o] = bucket end
    end
  elseif kind == 'w' then entry(rest).w = value
  elseif kind == 's' then entry(rest).s = value
  elseif kind == 'c' then entry(rest).c = value
  end
end
for i = 1, #stale, 500 do redis.call('HDEL', key, unpack(stale, i, math.min(i + 499, #stale))) end
local own = entry(team)
own.w = weight
own.s = now
redis.call('HSET', key, 'w|' .. team, ARGV[2], 's|' .. team, ARGV[3])
if ARGV[11] == '1' then return {0, 1, 2, -1} end
local weights = 0
local active = {}
for name, e in pairs(teams) do
  if name ~= team and e.r == 0 and e.t == 0 and e.c == 0 and now - e.s > windowMs + idle then
    redis.call('HDEL', key, 'w|' .. name, 's|' .. name, 'c|' .. name)
    teams[name] = nil
  elseif name == team or e.c > 0 or now - e.s < idle then
    active[name] = true
    weights = weights + e.w
  end
end
local dims = {{tonumber(ARGV[6]), 1, 'r', 'or'}, {tonumber(ARGV[7]), cost, 't', 'ot'}, {tonumber(ARGV[8]), 1, 'c', ''}}
for d = 1, 3 do
  local limit = dims[d][1]
  if limit >= 0 then
    local need = dims[d][2]
    local f = dims[d][3]
    local total = 0
    local oldest = nil
    for _, e in pairs(teams) do
      total = total + e[f]
      local o = e[dims[d][4]]
      if o ~= nil and (oldest == nil or o < oldest) then oldest = o end
    end
    local retry = -1
    if oldest ~= nil then retry = math.max(1, math.ceil((oldest + B + 1) * windowMs / B) - now) end
    if total + need > limit then return {0, d, 1, retry} end
    local mine = own[f]
    if not (mine == 0 or mine + need <= limit * weight / weights) then
      local held = 0
      for name, _ in pairs(active) do
        if name ~= team then held = held + math.max(0, limit * teams[name].w / weights - teams[name][f]) end
      end
      if total + need + held > limit then return {0, d, 2, retry} end
    end
  end
end
redis.call('HINCRBY', key, 'r|' .. team .. '|' .. current, 1)
redis.call('HINCRBY', key, 't|' .. team .. '|' .. current, cost)
redis.call('HINCRBY', key, 'c|' .. team, 1)
redis.call('PEXPIRE', key, windowMs * 2 + idle)
return {1, current, 0, 0}
`;

/** Frees a concurrency slot (never below 0) and corrects a bucket's tokens while it is in the window. */
const RELEASE = `
local key = KEYS[1]
local team = ARGV[1]
if ARGV[6] == '1' then
  local c = tonumber(redis.call('HGET', key, 'c|' .. team) or '0')
  if c > 0 then redis.call('HINCRBY', key, 'c|' .. team, -1) end
end
local delta = tonumber(ARGV[5])
local bucket = tonumber(ARGV[2])
if delta ~= 0 and bucket >= math.floor(tonumber(ARGV[3]) * tonumber(ARGV[7]) / tonumber(ARGV[4])) - tonumber(ARGV[7]) then
  local field = 't|' .. team .. '|' .. ARGV[2]
  local value = redis.call('HGET', key, field)
  if value then redis.call('HSET', key, field, math.max(0, tonumber(value) + delta)) end
end
return 0
`;

const DIMENSIONS: readonly QuotaDimension[] = ['requests', 'tokens', 'concurrent'];

/** The quota store on Redis: one script per operation, one round trip each. */
export class RedisQuotaStore implements QuotaStore {
  constructor(
    private readonly client: RedisClientType,
    private readonly keyOf: (name: string) => string,
  ) {}

  async acquire(acquire: QuotaAcquire): Promise<QuotaGrant> {
    const reply = (await this.client.eval(ACQUIRE, {
      keys: [this.keyOf(`quota:${acquire.key}`)],
      arguments: [
        acquire.team,
        acquire.weight,
        acquire.now,
        acquire.windowMs,
        acquire.idleMs,
        acquire.requestsPerMinute ?? -1,
        acquire.tokensPerMinute ?? -1,
        acquire.maxConcurrent ?? -1,
        acquire.tokens,
        WINDOW_BUCKETS,
        acquire.probe ? 1 : 0,
      ].map(String),
    })) as number[];
    const [granted, value, scope, retry] = reply.map(Number);
    if (granted === 1) return { granted: true, bucket: value };
    return { granted: false, dimension: DIMENSIONS[value - 1], scope: scope === 1 ? 'quota' : 'share', retryAfterMs: retry };
  }

  async release(release: QuotaRelease): Promise<void> {
    await this.client.eval(RELEASE, {
      keys: [this.keyOf(`quota:${release.key}`)],
      arguments: [release.team, release.bucket, release.now, release.windowMs, release.tokensDelta, release.concurrent ? 1 : 0, WINDOW_BUCKETS].map(String),
    });
  }

  async snapshot(key: string, now: number, windowMs: number): Promise<QuotaSnapshot> {
    const fields = await this.client.hGetAll(this.keyOf(`quota:${key}`));
    const teams = new Map<string, TeamCounters>();
    const entry = (name: string) => {
      let counters = teams.get(name);
      if (counters === undefined) teams.set(name, (counters = { weight: 1, seen: 0, concurrent: 0, requests: new Map(), tokens: new Map() }));
      return counters;
    };
    for (const [field, text] of Object.entries(fields)) {
      const value = Number(text);
      const kind = field[0];
      const rest = field.slice(2);
      if (kind === 'r' || kind === 't') {
        const separator = rest.lastIndexOf('|');
        entry(rest.slice(0, separator))[kind === 'r' ? 'requests' : 'tokens'].set(Number(rest.slice(separator + 1)), value);
      } else if (kind === 'w') entry(rest).weight = value;
      else if (kind === 's') entry(rest).seen = value;
      else if (kind === 'c') entry(rest).concurrent = value;
    }
    return snapshotOf(teams, now, windowMs);
  }
}
