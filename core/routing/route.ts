import { errors, type GatewayError } from '../errors.js';
import { isRecord } from '../spec/is-record.js';
import { regexProblem } from './safe-regex.js';
import { parseQuota, type ProviderQuota } from '../quota/settings.js';

/**
 * A route: how one request is spread over targets (providers with credentials), with retries,
 * timeouts and a deadline. The shape follows the widely used Portkey config (`strategy`,
 * `targets`, `retry`, `override_params`, `weight`, `on_status_codes`, `request_timeout`) so its
 * users can migrate; `docs/routing.md` describes every field.
 */
export interface Route {
  readonly strategy: Strategy;
  readonly targets: readonly Target[];
  readonly retry?: RetryPolicy;
  /** Per attempt, in milliseconds. */
  readonly request_timeout?: number;
  /** The whole request, all attempts and back-offs included, in milliseconds. */
  readonly deadline?: number;
  /** Statuses that move a fallback to its next target (default 429 and every 5xx). */
  readonly on_status_codes?: readonly number[];
  /** Pass-through requests are retried or failed over only when the route says they are idempotent. */
  readonly passthrough_idempotent?: boolean;
  /** The response cache for requests taking this route (top level only; docs/cache.md). */
  readonly cache?: RouteCache;
}

/**
 * How the response cache treats requests (a route's `cache`, or the configuration's default):
 * `simple` serves an identical request's stored answer, `semantic` also one whose text an
 * embeddings model finds close enough, `off` caches nothing.
 */
export interface RouteCache {
  readonly mode: 'simple' | 'semantic' | 'off';
  /** How long an answer is served, in seconds (default 3600). */
  readonly max_age?: number;
  /** A namespace shared on purpose by every key taking this route; default: the caller's own (its key). */
  readonly namespace?: string;
  /** Semantic mode: the least cosine similarity of a hit (default 0.95). */
  readonly threshold?: number;
  /** Semantic mode: the embeddings target the request's text is embedded with (required). */
  readonly embedding?: CacheEmbedding;
}

/** An embeddings target: a provider with a stored credential (or the caller's Bearer), or a virtual key, and the model. */
export interface CacheEmbedding {
  readonly model: string;
  readonly provider?: string;
  readonly credential?: string;
  /** A virtual key's id (`vk_…`), or its value in a config file or inline route: as a target's `virtual_key`. */
  readonly virtual_key?: string;
  readonly custom_host?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly request_timeout?: number;
}

/** Longest `max_age` of a cache setting: a year, in seconds. */
export const MAX_CACHE_AGE_S = 31_536_000;

export type Strategy =
  | { readonly mode: 'single' }
  | { readonly mode: 'fallback'; readonly on_status_codes?: readonly number[] }
  | { readonly mode: 'loadbalance'; readonly policy?: 'weighted' | 'least_busy' | 'lowest_latency' }
  | { readonly mode: 'conditional'; readonly conditions: readonly Condition[]; readonly default?: string };

/** A conditional route's rule: the first whose `query` matches picks the target named `then`. */
export interface Condition {
  readonly query: Query;
  readonly then: string;
}

/**
 * A query over the request's facts (`metadata.<key>`, `model`, `caller.id`, `caller.name`,
 * `user`), MongoDB style: `{ "metadata.tier": { "$in": ["gold"] } }`, `{ "$or": [ … ] }`.
 */
export type Query = Readonly<Record<string, unknown>>;

/** The operators a condition may use. */
export const QUERY_OPERATORS = ['$eq', '$ne', '$in', '$nin', '$regex', '$gt', '$gte', '$lt', '$lte', '$and', '$or'] as const;

export interface RetryPolicy {
  /** Retries of one target after its first attempt (0 to 10). */
  readonly attempts: number;
  /** Statuses that are retried (default 429, 500, 502, 503, 504). */
  readonly on_status_codes?: readonly number[];
  /** Longest wait a `Retry-After` may ask for, in milliseconds (default 10 000). */
  readonly max_retry_after?: number;
}

/**
 * Where one attempt goes. A provider with a stored credential id, or a virtual key (its provider,
 * credential and custom host), or a nested route; never an inline secret. With neither a
 * credential nor a virtual key, the caller's own `Authorization: Bearer` is used.
 */
export interface Target {
  /** Shown in logs, metrics and `x-gateway-route-target`; unique within its route. */
  readonly name?: string;
  readonly provider?: string;
  /** A stored credential id (`cred_…`). */
  readonly credential?: string;
  /**
   * A virtual key whose provider, credential and custom host this target uses: its id (`vk_…`, what
   * stored routes hold and the admin API shows, with `virtual_key_hint`), or in a config file or an
   * inline route its value (`vk-…`; the admin API stores the id instead).
   */
  readonly virtual_key?: string;
  /** A custom host for this target (checked like `x-gateway-custom-host`). */
  readonly custom_host?: string;
  /** Load-balancing weight (default 1). */
  readonly weight?: number;
  /** Body fields set on the request for this target (`model`, `max_tokens`, …). */
  readonly override_params?: Readonly<Record<string, unknown>>;
  /** Gateway headers for this target (cloud headers such as `x-gateway-cloud-a-deployment-id`). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly request_timeout?: number;
  readonly on_status_codes?: readonly number[];
  /** The provider account's own limits for this target (docs/limits.md): wins over its credential's `quota`. */
  readonly quota?: ProviderQuota;
  /** Active health checks of this target (docs/routing.md): probes that open and close its breaker. */
  readonly health_check?: HealthCheck;
  /** A nested route in place of a provider. */
  readonly route?: Route;
}

/**
 * A target's active health check: every `interval_ms` the gateway sends it a cheap request
 * (`models`: its models list; `chat`: a 1-token chat with `model`, else the target's
 * `override_params.model`); `unhealthy_threshold` failures in a row open the target's breaker,
 * `healthy_threshold` successes in a row close it.
 */
export interface HealthCheck {
  readonly interval_ms: number;
  readonly timeout_ms?: number;
  readonly request?: 'models' | 'chat';
  readonly model?: string;
  readonly unhealthy_threshold?: number;
  readonly healthy_threshold?: number;
}

/** Defaults and bounds of a health check's fields. */
export const HEALTH_CHECK = { minIntervalMs: 1_000, maxIntervalMs: 3_600_000, timeoutMs: 5_000, maxTimeoutMs: 60_000, unhealthyThreshold: 3, healthyThreshold: 2, maxThreshold: 100 } as const;

/** Nesting depth and total targets a route may have. */
export const ROUTE_LIMITS = { maxDepth: 4, maxTargets: 32 } as const;

const STRATEGIES = ['single', 'fallback', 'loadbalance', 'conditional'] as const;
const BALANCE_POLICIES = ['weighted', 'least_busy', 'lowest_latency'] as const;
const STRATEGY_FIELDS: Record<(typeof STRATEGIES)[number], readonly string[]> = {
  single: ['mode'],
  fallback: ['mode', 'on_status_codes'],
  loadbalance: ['mode', 'policy'],
  conditional: ['mode', 'conditions', 'default'],
};
const TARGET_FIELDS = new Set(['name', 'provider', 'credential', 'virtual_key', 'virtual_key_hint', 'custom_host', 'weight', 'override_params', 'headers', 'request_timeout', 'on_status_codes', 'quota', 'health_check', 'route']);
const ROUTE_FIELDS = new Set(['strategy', 'targets', 'retry', 'request_timeout', 'deadline', 'on_status_codes', 'passthrough_idempotent', 'cache']);
const CACHE_FIELDS = new Set(['mode', 'max_age', 'namespace', 'threshold', 'embedding']);
const EMBEDDING_FIELDS = new Set(['model', 'provider', 'credential', 'virtual_key', 'virtual_key_hint', 'custom_host', 'headers', 'request_timeout']);
const MAX_TIMEOUT_MS = 3_600_000;

/** 400 `invalid_route` for the route field `param`: the message names it. */
export const invalidRoute = (message: string, { param }: { param: string }): GatewayError =>
  errors.invalidRequest(`Invalid route at '${param}': ${message}`, { param, code: 'invalid_route' });

/**
 * Checks a route (from a config file, the admin API, a virtual key or an inline header) and
 * returns it typed, or throws 400 `invalid_route` whose `param` names the field
 * (`config.targets[1].weight`). References (providers, credentials, keys) are checked by the
 * caller, which knows what exists; `param` is the prefix of every path (`config`, `route`).
 */
export function parseRoute(value: unknown, param = 'config'): Route {
  const counter = { targets: 0 };
  return parseLevel(value, param, 1, counter);
}

function parseLevel(value: unknown, param: string, depth: number, counter: { targets: number }): Route {
  if (!isRecord(value)) throw invalidRoute('expected an object.', { param });
  if (depth > ROUTE_LIMITS.maxDepth) throw invalidRoute(`routes nest at most ${ROUTE_LIMITS.maxDepth} deep.`, { param });
  for (const key of Object.keys(value)) if (!ROUTE_FIELDS.has(key)) throw invalidRoute('is not a route field.', { param: `${param}.${key}` });
  if (value.cache !== undefined && depth > 1) throw invalidRoute('only the top-level route caches; remove it from the nested route.', { param: `${param}.cache` });
  const targets = value.targets;
  if (!Array.isArray(targets) || targets.length === 0) throw invalidRoute('expected a non-empty array of targets.', { param: `${param}.targets` });
  counter.targets += targets.length;
  if (counter.targets > ROUTE_LIMITS.maxTargets) throw invalidRoute(`a route has at most ${ROUTE_LIMITS.maxTargets} targets in all.`, { param: `${param}.targets` });
  const parsedTargets = targets.map((target, index) => parseTarget(target, `${param}.targets[${index}]`, depth, counter));
  const names = new Set<string>();
  parsedTargets.forEach((target, index) => {
    if (target.name === undefined) return;
    if (names.has(target.name)) throw invalidRoute(`"${target.name}" is used by another target of this route.`, { param: `${param}.targets[${index}].name` });
    names.add(target.name);
  });
  const strategy = parseStrategy(value.strategy, `${param}.strategy`, parsedTargets);
  if (strategy.mode === 'single' && parsedTargets.length !== 1) throw invalidRoute('a single route has exactly one target.', { param: `${param}.targets` });
  return {
    strategy,
    targets: parsedTargets,
    ...(value.retry !== undefined ? { retry: parseRetry(value.retry, `${param}.retry`) } : {}),
    ...optionalMs(value, 'request_timeout', param),
    ...optionalMs(value, 'deadline', param),
    ...(value.on_status_codes !== undefined ? { on_status_codes: statusCodes(value.on_status_codes, `${param}.on_status_codes`) } : {}),
    ...(value.passthrough_idempotent !== undefined ? { passthrough_idempotent: booleanAt(value.passthrough_idempotent, `${param}.passthrough_idempotent`) } : {}),
    ...(value.cache !== undefined ? { cache: parseRouteCache(value.cache, `${param}.cache`) } : {}),
  };
}

/**
 * Checks a cache setting (a route's `cache`, or the configuration's `cache.default`) and returns
 * it typed, or throws 400 `invalid_route` whose `param` names the field.
 */
export function parseRouteCache(value: unknown, param: string): RouteCache {
  if (!isRecord(value)) throw invalidRoute('expected an object such as { "mode": "simple", "max_age": 3600 }.', { param });
  for (const key of Object.keys(value)) if (!CACHE_FIELDS.has(key)) throw invalidRoute('is not a cache field.', { param: `${param}.${key}` });
  const { mode, max_age: maxAge, namespace, threshold, embedding } = value;
  if (mode !== 'simple' && mode !== 'semantic' && mode !== 'off') throw invalidRoute('expected one of simple, semantic, off.', { param: `${param}.mode` });
  if (maxAge !== undefined && (!Number.isInteger(maxAge) || (maxAge as number) < 1 || (maxAge as number) > MAX_CACHE_AGE_S)) {
    throw invalidRoute(`expected an integer number of seconds from 1 to ${MAX_CACHE_AGE_S}.`, { param: `${param}.max_age` });
  }
  if (namespace !== undefined && (typeof namespace !== 'string' || !/^[A-Za-z0-9._:-]{1,64}$/.test(namespace))) {
    throw invalidRoute('expected a string matching /^[A-Za-z0-9._:-]{1,64}$/.', { param: `${param}.namespace` });
  }
  if (mode !== 'semantic' && (threshold !== undefined || embedding !== undefined)) {
    throw invalidRoute('goes with mode semantic.', { param: `${param}.${threshold !== undefined ? 'threshold' : 'embedding'}` });
  }
  if (threshold !== undefined && (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1))) throw invalidRoute('expected a number above 0 and at most 1.', { param: `${param}.threshold` });
  if (mode === 'semantic' && embedding === undefined) throw invalidRoute('semantic mode needs the embeddings target it embeds texts with.', { param: `${param}.embedding` });
  return {
    mode,
    ...(maxAge !== undefined ? { max_age: maxAge as number } : {}),
    ...(namespace !== undefined ? { namespace: namespace as string } : {}),
    ...(threshold !== undefined ? { threshold: threshold as number } : {}),
    ...(embedding !== undefined ? { embedding: parseEmbedding(embedding, `${param}.embedding`) } : {}),
  };
}

function parseEmbedding(value: unknown, param: string): CacheEmbedding {
  if (!isRecord(value)) throw invalidRoute('expected an embeddings target: an object with "model" and one of "provider" or "virtual_key".', { param });
  for (const key of Object.keys(value)) if (!EMBEDDING_FIELDS.has(key)) throw invalidRoute('is not a field of an embeddings target.', { param: `${param}.${key}` });
  const { model, ...target } = value;
  if (typeof model !== 'string' || model.length === 0 || model.length > 256) throw invalidRoute('expected the embeddings model, a non-empty string of at most 256 characters.', { param: `${param}.model` });
  if (target.provider === undefined && target.virtual_key === undefined) throw invalidRoute('an embeddings target names exactly one of provider or virtual_key.', { param });
  const { name: _name, ...checked } = parseTarget(target, param, ROUTE_LIMITS.maxDepth, { targets: 0 });
  return { model, ...checked } as CacheEmbedding;
}

function parseStrategy(value: unknown, param: string, targets: readonly Target[]): Strategy {
  if (value === undefined) return { mode: targets.length === 1 ? 'single' : 'fallback' };
  if (!isRecord(value)) throw invalidRoute('expected an object such as { "mode": "fallback" }.', { param });
  const mode = value.mode;
  if (typeof mode !== 'string' || !(STRATEGIES as readonly string[]).includes(mode)) throw invalidRoute(`expected one of ${STRATEGIES.join(', ')}.`, { param: `${param}.mode` });
  for (const key of Object.keys(value)) if (!STRATEGY_FIELDS[mode as (typeof STRATEGIES)[number]].includes(key)) throw invalidRoute(`is not a field of a ${mode} strategy.`, { param: `${param}.${key}` });
  switch (mode) {
    case 'single':
      return { mode };
    case 'fallback':
      return value.on_status_codes === undefined ? { mode } : { mode, on_status_codes: statusCodes(value.on_status_codes, `${param}.on_status_codes`) };
    case 'loadbalance': {
      const policy = value.policy;
      if (policy !== undefined && !(BALANCE_POLICIES as readonly unknown[]).includes(policy)) throw invalidRoute(`expected one of ${BALANCE_POLICIES.join(', ')}.`, { param: `${param}.policy` });
      return policy === undefined ? { mode } : { mode, policy: policy as (typeof BALANCE_POLICIES)[number] };
    }
    default: {
      const names = new Set(targets.map((target) => target.name).filter((name): name is string => name !== undefined));
      const conditions = value.conditions;
      if (!Array.isArray(conditions) || conditions.length === 0) throw invalidRoute('expected a non-empty array of { query, then }.', { param: `${param}.conditions` });
      const parsed = conditions.map((condition, index): Condition => {
        const at = `${param}.conditions[${index}]`;
        if (!isRecord(condition)) throw invalidRoute('expected an object { query, then }.', { param: at });
        checkQuery(condition.query, `${at}.query`);
        if (typeof condition.then !== 'string' || !names.has(condition.then)) throw invalidRoute('must name a target of this route.', { param: `${at}.then` });
        return { query: condition.query as Query, then: condition.then };
      });
      const fallback = value.default;
      if (fallback !== undefined && (typeof fallback !== 'string' || !names.has(fallback))) throw invalidRoute('must name a target of this route.', { param: `${param}.default` });
      return fallback === undefined ? { mode: 'conditional', conditions: parsed } : { mode: 'conditional', conditions: parsed, default: fallback };
    }
  }
}

function checkQuery(value: unknown, param: string): void {
  if (!isRecord(value)) throw invalidRoute('expected an object.', { param });
  for (const [key, condition] of Object.entries(value)) {
    const at = `${param}.${key}`;
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(condition) || condition.length === 0) throw invalidRoute('expected a non-empty array of queries.', { param: at });
      condition.forEach((query, index) => checkQuery(query, `${at}[${index}]`));
      continue;
    }
    if (key.startsWith('$')) throw invalidRoute(`is not an operator here; use ${QUERY_OPERATORS.join(' ')}.`, { param: at });
    if (!/^(metadata\.[^.]+|model|user|caller\.id|caller\.name)$/.test(key)) throw invalidRoute('a condition reads metadata.<key>, model, user, caller.id or caller.name.', { param: at });
    if (!isRecord(condition)) continue; // a plain value means $eq
    for (const [operator, operand] of Object.entries(condition)) {
      const opAt = `${at}.${operator}`;
      if (!(QUERY_OPERATORS as readonly string[]).includes(operator) || operator === '$and' || operator === '$or') throw invalidRoute(`expected one of $eq $ne $in $nin $regex $gt $gte $lt $lte.`, { param: opAt });
      if ((operator === '$in' || operator === '$nin') && !Array.isArray(operand)) throw invalidRoute('expected an array.', { param: opAt });
      if (operator === '$regex') {
        if (typeof operand !== 'string' || operand.length > 256) throw invalidRoute('expected a regular expression of at most 256 characters.', { param: opAt });
        const problem = regexProblem(operand);
        if (problem !== undefined) throw invalidRoute(`is not a regular expression the gateway can match in linear time (RE2 syntax: no lookarounds or backreferences): ${problem}.`, { param: opAt });
      }
      if (['$gt', '$gte', '$lt', '$lte'].includes(operator) && typeof operand !== 'number' && typeof operand !== 'string') throw invalidRoute('expected a number or a string.', { param: opAt });
    }
  }
}

/** The fields of a Portkey-style nested target that belong to the route it holds; the others stay on the target. */
const NESTED_ROUTE_FIELDS = ['strategy', 'targets', 'retry', 'deadline', 'passthrough_idempotent', 'cache'] as const;

/**
 * A target in Portkey's nested form (it holds its own `strategy` and `targets`) as ours: those
 * route fields move into `route`; `name`, `weight`, `override_params`, `headers`, `request_timeout`
 * and `on_status_codes` stay on the target. A target with both forms is refused.
 */
function portkeyNestedTarget(value: Record<string, unknown>, param: string): Record<string, unknown> {
  if (value.targets === undefined && value.strategy === undefined) return value;
  if (value.route !== undefined) throw invalidRoute('a target holds a nested route either as "route" or as its own strategy and targets, not both.', { param });
  const route: Record<string, unknown> = {};
  const target: Record<string, unknown> = {};
  for (const [field, entry] of Object.entries(value)) ((NESTED_ROUTE_FIELDS as readonly string[]).includes(field) ? route : target)[field] = entry;
  return { ...target, route };
}

function parseTarget(given: unknown, param: string, depth: number, counter: { targets: number }): Target {
  if (!isRecord(given)) throw invalidRoute('expected an object.', { param });
  const value = portkeyNestedTarget(given, param);
  for (const key of Object.keys(value)) if (!TARGET_FIELDS.has(key)) throw invalidRoute('is not a target field.', { param: `${param}.${key}` });
  const text = (field: string, pattern?: RegExp): Record<string, string> => {
    const field_value = value[field];
    if (field_value === undefined) return {};
    if (typeof field_value !== 'string' || field_value.length === 0 || field_value.length > 256 || (pattern && !pattern.test(field_value))) {
      throw invalidRoute(pattern ? `expected a string matching ${pattern}.` : 'expected a non-empty string of at most 256 characters.', { param: `${param}.${field}` });
    }
    return { [field]: field_value };
  };
  const route = value.route !== undefined ? { route: parseLevel(value.route, `${param}.route`, depth + 1, counter) } : {};
  const kinds = [value.provider, value.virtual_key, value.route].filter((entry) => entry !== undefined).length;
  if (kinds !== 1) throw invalidRoute('a target names exactly one of provider, virtual_key or route.', { param });
  if (value.credential !== undefined && value.provider === undefined) throw invalidRoute('goes with provider.', { param: `${param}.credential` });
  // Shown by the admin API beside a key's id; read-only, so a route read and sent back is accepted, and dropped here.
  if (value.virtual_key_hint !== undefined && (typeof value.virtual_key_hint !== 'string' || value.virtual_key_hint.length > 256)) {
    throw invalidRoute('is shown by the admin API and ignored on input; if given, a string of at most 256 characters.', { param: `${param}.virtual_key_hint` });
  }
  if (value.custom_host !== undefined && value.provider === undefined) throw invalidRoute('goes with provider.', { param: `${param}.custom_host` });
  if (value.weight !== undefined && (typeof value.weight !== 'number' || !Number.isFinite(value.weight) || value.weight < 0 || value.weight > 1_000_000)) {
    throw invalidRoute('expected a number from 0 to 1000000.', { param: `${param}.weight` });
  }
  if (value.override_params !== undefined && !isRecord(value.override_params)) throw invalidRoute('expected an object of request fields.', { param: `${param}.override_params` });
  if (value.headers !== undefined) {
    if (!isRecord(value.headers)) throw invalidRoute('expected an object of strings.', { param: `${param}.headers` });
    for (const [name, header] of Object.entries(value.headers)) {
      if (!/^x-gateway-[a-z0-9-]+$/.test(name) || typeof header !== 'string') throw invalidRoute('only x-gateway-* headers with string values (lower case names).', { param: `${param}.headers.${name}` });
      if (name === 'x-gateway-api-key' || name === 'x-gateway-config') throw invalidRoute('cannot be set by a route.', { param: `${param}.headers.${name}` });
    }
  }
  return {
    ...text('name', /^[A-Za-z0-9._:-]{1,64}$/),
    ...text('provider', /^[a-z0-9][a-z0-9-]{0,63}$/),
    ...text('credential'),
    ...text('virtual_key'),
    ...text('custom_host'),
    ...(value.weight !== undefined ? { weight: value.weight as number } : {}),
    ...(value.override_params !== undefined ? { override_params: value.override_params as Record<string, unknown> } : {}),
    ...(value.headers !== undefined ? { headers: value.headers as Record<string, string> } : {}),
    ...optionalMs(value, 'request_timeout', param),
    ...(value.on_status_codes !== undefined ? { on_status_codes: statusCodes(value.on_status_codes, `${param}.on_status_codes`) } : {}),
    ...(value.quota !== undefined ? { quota: targetQuota(value.quota, value.provider, `${param}.quota`) } : {}),
    ...(value.health_check !== undefined ? { health_check: parseHealthCheck(value.health_check, value, `${param}.health_check`) } : {}),
    ...route,
  };
}

const HEALTH_CHECK_FIELDS = ['interval_ms', 'timeout_ms', 'request', 'model', 'unhealthy_threshold', 'healthy_threshold'];

/** A target's `health_check`, on a provider or virtual-key target (a nested route's targets carry their own). */
function parseHealthCheck(value: unknown, target: Record<string, unknown>, param: string): HealthCheck {
  if (target.route !== undefined) throw invalidRoute("goes with provider or virtual_key (give the nested route's targets their own).", { param });
  if (!isRecord(value)) throw invalidRoute('expected an object such as { "interval_ms": 10000 }.', { param });
  for (const key of Object.keys(value)) if (!HEALTH_CHECK_FIELDS.includes(key)) throw invalidRoute(`is not a health check field; expected one of ${HEALTH_CHECK_FIELDS.join(', ')}.`, { param: `${param}.${key}` });
  const integer = (field: string, min: number, max: number): Record<string, number> => {
    const entry = value[field];
    if (entry === undefined) return {};
    if (!Number.isInteger(entry) || (entry as number) < min || (entry as number) > max) throw invalidRoute(`expected an integer from ${min} to ${max}.`, { param: `${param}.${field}` });
    return { [field]: entry as number };
  };
  if (value.interval_ms === undefined) throw invalidRoute('a health check needs its interval_ms.', { param: `${param}.interval_ms` });
  if (value.request !== undefined && value.request !== 'models' && value.request !== 'chat') throw invalidRoute('expected models or chat.', { param: `${param}.request` });
  if (value.model !== undefined && (typeof value.model !== 'string' || value.model.length === 0 || value.model.length > 256)) throw invalidRoute('expected a non-empty string of at most 256 characters.', { param: `${param}.model` });
  const overrideModel = isRecord(target.override_params) ? target.override_params.model : undefined;
  if (value.request === 'chat' && value.model === undefined && typeof overrideModel !== 'string') throw invalidRoute("a chat probe needs a model: give health_check.model or the target's override_params.model.", { param: `${param}.model` });
  return {
    ...(integer('interval_ms', HEALTH_CHECK.minIntervalMs, HEALTH_CHECK.maxIntervalMs) as { interval_ms: number }),
    ...integer('timeout_ms', 1, HEALTH_CHECK.maxTimeoutMs),
    ...(value.request !== undefined ? { request: value.request } : {}),
    ...(value.model !== undefined ? { model: value.model as string } : {}),
    ...integer('unhealthy_threshold', 1, HEALTH_CHECK.maxThreshold),
    ...integer('healthy_threshold', 1, HEALTH_CHECK.maxThreshold),
  };
}

/** A target's `quota`, on a provider target only (a virtual key's target takes its credential's). */
function targetQuota(value: unknown, provider: unknown, param: string): ProviderQuota {
  if (provider === undefined) throw invalidRoute("goes with provider (a virtual key's target uses its credential's quota).", { param });
  try {
    return parseQuota(value, param);
  } catch (error) {
    throw invalidRoute((error as GatewayError).body.message.replace(/^Invalid '[^']*': /, ''), { param: (error as GatewayError).body.param ?? param });
  }
}

function parseRetry(value: unknown, param: string): RetryPolicy {
  if (!isRecord(value)) throw invalidRoute('expected an object such as { "attempts": 2 }.', { param });
  for (const key of Object.keys(value)) if (!['attempts', 'on_status_codes', 'max_retry_after'].includes(key)) throw invalidRoute('is not a retry field.', { param: `${param}.${key}` });
  const attempts = value.attempts;
  if (!Number.isInteger(attempts) || (attempts as number) < 0 || (attempts as number) > 10) throw invalidRoute('expected an integer from 0 to 10.', { param: `${param}.attempts` });
  return {
    attempts: attempts as number,
    ...(value.on_status_codes !== undefined ? { on_status_codes: statusCodes(value.on_status_codes, `${param}.on_status_codes`) } : {}),
    ...optionalMs(value, 'max_retry_after', param),
  };
}

function statusCodes(value: unknown, param: string): number[] {
  if (!Array.isArray(value) || value.some((code) => !Number.isInteger(code) || code < 400 || code > 599)) {
    throw invalidRoute('expected an array of HTTP statuses from 400 to 599.', { param });
  }
  return value as number[];
}

function optionalMs(value: Record<string, unknown>, field: string, param: string): Record<string, number> {
  const ms = value[field];
  if (ms === undefined) return {};
  if (!Number.isInteger(ms) || (ms as number) < 1 || (ms as number) > MAX_TIMEOUT_MS) throw invalidRoute(`expected an integer number of milliseconds from 1 to ${MAX_TIMEOUT_MS}.`, { param: `${param}.${field}` });
  return { [field]: ms as number };
}

const booleanAt = (value: unknown, param: string): boolean => {
  if (typeof value !== 'boolean') throw invalidRoute('expected true or false.', { param });
  return value;
};
