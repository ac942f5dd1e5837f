import { isRecord } from '../spec/is-record.js';
import { emptyPlan, type ImportPlan, planCredential, recordName } from './import-plan.js';

/** Route fields carried as they are (the route follows Portkey's config shape: docs/routing.md). */
const ROUTE_FIELDS = new Set(['strategy', 'targets', 'retry', 'request_timeout', 'on_status_codes', 'cache']);
/** Target fields carried as they are. */
const TARGET_FIELDS = new Set(['name', 'provider', 'weight', 'override_params', 'request_timeout', 'on_status_codes', 'custom_host', 'strategy', 'targets', 'retry']);
/** AWS credential fields of a Bedrock target, and the vault credential field each becomes (header-named fields supply the cloud headers). */
const AWS_FIELDS: Readonly<Record<string, string | undefined>> = {
  aws_access_key_id: undefined,
  aws_secret_access_key: 'x-gateway-cloud-c-secret-access-key',
  aws_session_token: 'x-gateway-cloud-c-session-token',
  aws_region: 'x-gateway-cloud-c-region',
};
/** Request parameters a Portkey condition reads as `params.<field>` that a route's query reads directly. */
const QUERY_PARAMS: Readonly<Record<string, string>> = { 'params.model': 'model', 'params.user': 'user' };

interface Walk {
  readonly plan: ImportPlan;
  readonly providers: ReadonlySet<string>;
  readonly routeName: string;
}

/**
 * A Portkey config as a route of this gateway: the shape carries over (nested targets included);
 * `api_key` and AWS keys become stored credentials; a Portkey virtual key, an unregistered
 * provider and fields this gateway has no counterpart for are reported, not carried. A config that
 * is itself one target (`provider` at the top) becomes a single-target route.
 */
export function portkeyPlan(config: unknown, name: string, providers: ReadonlySet<string>): ImportPlan {
  const plan = emptyPlan();
  if (!isRecord(config)) throw new Error('a Portkey config is a JSON object');
  const walk: Walk = { plan, providers, routeName: recordName(name) };
  const topLevel = config.targets === undefined ? topLevelTarget(config) : config;
  const route = routeOf(topLevel, 'config', walk);
  if (route !== undefined) plan.routes.push({ name: walk.routeName, route });
  return plan;
}

/** A config with the target's fields at the top: its route fields stay, the rest is its one target. */
function topLevelTarget(config: Record<string, unknown>): Record<string, unknown> {
  const route: Record<string, unknown> = {};
  const target: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(config)) (ROUTE_FIELDS.has(field) && field !== 'strategy' && field !== 'on_status_codes' ? route : target)[field] = value;
  if (isRecord(config.strategy) && config.strategy.mode !== 'single') target.strategy = config.strategy;
  return { ...route, targets: [target] };
}

function routeOf(node: Record<string, unknown>, path: string, walk: Walk): Record<string, unknown> | undefined {
  const route: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(node)) {
    if (!ROUTE_FIELDS.has(field)) walk.plan.notCarried.push(`${path}.${field}: not a field of a route here`);
    else if (field === 'targets') continue;
    else if (field === 'strategy') route.strategy = strategyOf(value, `${path}.strategy`, walk);
    else if (field === 'retry') route.retry = retryOf(value, `${path}.retry`, walk);
    else if (field === 'cache') route.cache = cacheOf(value, `${path}.cache`, walk);
    else route[field] = value;
  }
  const targets = (Array.isArray(node.targets) ? node.targets : []).flatMap((target, index) => {
    const carried = targetOf(target, `${path}.targets[${index}]`, walk);
    return carried === undefined ? [] : [carried];
  });
  if (targets.length === 0) {
    walk.plan.notCarried.push(`${path}.targets: no target could be carried over, so neither could this route`);
    return undefined;
  }
  const strategy = route.strategy as { mode?: unknown; conditions?: unknown } | undefined;
  if (strategy?.mode === 'single' && targets.length > 1) targets.length = 1;
  return { ...route, targets };
}

function strategyOf(value: unknown, path: string, walk: Walk): unknown {
  if (!isRecord(value) || !Array.isArray(value.conditions)) return value;
  const conditions = value.conditions.flatMap((condition: unknown, index) => {
    if (!isRecord(condition) || !isRecord(condition.query)) return [condition];
    const query: Record<string, unknown> = {};
    for (const [key, operand] of Object.entries(condition.query)) {
      if (key.startsWith('params.') && QUERY_PARAMS[key] === undefined) {
        walk.plan.notCarried.push(`${path}.conditions[${index}].query.${key}: a route's condition reads model, user, metadata.<key> and the caller, not other request parameters; the condition was left out`);
        return [];
      }
      query[QUERY_PARAMS[key] ?? key] = operand;
    }
    return [{ ...condition, query }];
  });
  return { ...value, conditions };
}

function retryOf(value: unknown, path: string, walk: Walk): unknown {
  if (!isRecord(value)) return value;
  const retry: Record<string, unknown> = {};
  for (const [field, entry] of Object.entries(value)) {
    if (field === 'attempts') retry.attempts = typeof entry === 'number' ? Math.min(Math.max(Math.trunc(entry), 0), 10) : entry;
    else if (field === 'on_status_codes') retry.on_status_codes = entry;
    else walk.plan.notCarried.push(`${path}.${field}: not a retry field here (Retry-After is always honoured, up to retry.max_retry_after)`);
  }
  return retry;
}

function cacheOf(value: unknown, path: string, walk: Walk): unknown {
  if (!isRecord(value)) return value;
  const cache: Record<string, unknown> = { mode: value.mode };
  if (value.max_age !== undefined) cache.max_age = value.max_age;
  if (value.mode === 'semantic') {
    cache.mode = 'simple';
    walk.plan.notCarried.push(`${path}.mode: semantic needs the embeddings target it embeds with here (docs/cache.md); carried as simple`);
  }
  for (const field of Object.keys(value)) if (field !== 'mode' && field !== 'max_age') walk.plan.notCarried.push(`${path}.${field}: not a cache field here`);
  return cache;
}

function targetOf(value: unknown, path: string, walk: Walk): Record<string, unknown> | undefined {
  if (!isRecord(value)) {
    walk.plan.notCarried.push(`${path}: not an object`);
    return undefined;
  }
  if (value.targets !== undefined) {
    // Portkey's nested target: its own route, with the target's own fields beside it.
    const { name, weight, override_params: overrideParams, request_timeout: timeout, on_status_codes: statuses, ...held } = value;
    const route = routeOf(held, path, walk);
    if (route === undefined) return undefined;
    return { ...route, ...(name !== undefined ? { name } : {}), ...(weight !== undefined ? { weight } : {}), ...(overrideParams !== undefined ? { override_params: overrideParams } : {}), ...(timeout !== undefined ? { request_timeout: timeout } : {}), ...(statuses !== undefined ? { on_status_codes: statuses } : {}) };
  }
  const provider = value.provider;
  const virtualKey = value.virtual_key;
  if (provider === undefined && typeof virtualKey === 'string' && /^vk[-_]/.test(virtualKey)) return { ...carriedFields(value, path, walk, ['virtual_key']), virtual_key: virtualKey };
  if (virtualKey !== undefined) {
    walk.plan.notCarried.push(`${path}.virtual_key: a Portkey virtual key; make one here (llm-gateway keys create) or give provider and api_key; the target was left out`);
    return undefined;
  }
  if (typeof provider !== 'string' || !walk.providers.has(provider)) {
    walk.plan.notCarried.push(`${path}.provider: ${typeof provider === 'string' ? `"${provider}" is not a provider registered in this gateway` : 'missing'}; the target was left out`);
    return undefined;
  }
  const target = carriedFields(value, path, walk, ['api_key', ...Object.keys(AWS_FIELDS)]);
  const credential = credentialOf(value, provider, path, walk);
  return { ...target, ...(credential !== undefined ? { credential } : {}) };
}

/** The target's carried fields; every other one is reported (`handled` are the caller's). */
function carriedFields(value: Record<string, unknown>, path: string, walk: Walk, handled: readonly string[]): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  for (const [field, entry] of Object.entries(value)) {
    if (handled.includes(field)) continue;
    if (TARGET_FIELDS.has(field)) target[field] = entry;
    else walk.plan.notCarried.push(`${path}.${field}: not a field of a target here`);
  }
  return target;
}

/** The stored credential a target's `api_key` (or AWS keys) becomes; undefined: the caller's Bearer is used. */
function credentialOf(value: Record<string, unknown>, provider: string, path: string, walk: Walk): string | undefined {
  const fields: Record<string, string> = {};
  for (const [field, header] of Object.entries(AWS_FIELDS)) if (header !== undefined && typeof value[field] === 'string') fields[header] = value[field] as string;
  const apiKey = typeof value.aws_access_key_id === 'string' ? value.aws_access_key_id : typeof value.api_key === 'string' ? value.api_key : undefined;
  if (apiKey === undefined && Object.keys(fields).length === 0) return undefined;
  const label = typeof value.name === 'string' ? value.name : path.replace(/^config\.?/, '').replace(/[^A-Za-z0-9]+/g, '-');
  return planCredential(walk.plan, {
    name: recordName(`portkey-${walk.routeName}-${label || provider}`),
    provider,
    ...(apiKey !== undefined ? { api_key: apiKey } : {}),
    ...(Object.keys(fields).length > 0 ? { fields } : {}),
  });
}
