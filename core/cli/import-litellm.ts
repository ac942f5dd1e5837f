import { isRecord } from '../spec/is-record.js';
import type { ProviderForeignNames, ProviderRegistration } from '../spec/provider.js';
import { emptyPlan, type ImportPlan, planCredential, recordName } from './import-plan.js';

/** LiteLLM's routing strategies and the load-balancing policy each becomes. */
const POLICIES: Readonly<Record<string, string>> = { 'simple-shuffle': 'weighted', 'least-busy': 'least_busy', 'latency-based-routing': 'lowest_latency' };
/** `litellm_params` read by the import; every other one is reported. */
const READ_PARAMS = new Set(['model', 'api_key', 'api_base', 'api_version', 'weight', 'timeout', 'aws_access_key_id', 'aws_secret_access_key', 'aws_session_token', 'aws_region_name']);
const SETTINGS_READ: Readonly<Record<string, readonly string[]>> = {
  router_settings: ['routing_strategy', 'num_retries', 'timeout', 'fallbacks'],
  litellm_settings: ['num_retries', 'request_timeout', 'fallbacks'],
};

/** The registered providers as LiteLLM names them (each plugin's `foreignNames`). */
export interface LitellmProviders {
  /** Registered provider ids. */
  readonly registered: ReadonlySet<string>;
  /** Each provider's declarations, by id. */
  readonly byId: ReadonlyMap<string, ProviderForeignNames>;
}

/** What the registrations declare of LiteLLM's names. */
export function litellmProviders(registrations: readonly ProviderRegistration[]): LitellmProviders {
  return {
    registered: new Set(registrations.map((registration) => registration.manifest.id)),
    byId: new Map(registrations.filter((registration) => registration.foreignNames).map((registration) => [registration.manifest.id, registration.foreignNames!])),
  };
}

interface Walk {
  readonly plan: ImportPlan;
  readonly providers: LitellmProviders;
  readonly environment: NodeJS.ProcessEnv;
}

/** A value of the config: `os.environ/NAME` is read from the environment now (reported when unset). */
function resolved(value: unknown, path: string, walk: Walk): string | undefined {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') return undefined;
  const match = /^os\.environ\/(.+)$/.exec(value);
  if (!match) return value;
  const found = walk.environment[match[1]];
  if (found === undefined || found === '') walk.plan.notCarried.push(`${path}: the environment variable ${match[1]} is not set`);
  return found || undefined;
}

/**
 * The provider and model of `litellm_params.model` (`azure/my-deployment`), by the prefixes the
 * plugins declare; a bare name by the plugins' `litellmBareModels`, as LiteLLM infers it.
 */
function providerModel(model: string, providers: LitellmProviders): { provider?: string; model: string } {
  const slash = model.indexOf('/');
  const prefix = slash > 0 ? model.slice(0, slash) : undefined;
  for (const [id, names] of providers.byId) {
    if (prefix !== undefined && names.litellm?.includes(prefix)) return { provider: id, model: model.slice(slash + 1) };
  }
  for (const [id, names] of providers.byId) if (names.litellmBareModels?.test(model)) return { provider: id, model };
  return { model };
}

/** One deployment (a `model_list` entry) as a route target; undefined when it cannot be carried (reported). */
function deploymentTarget(entry: Record<string, unknown>, index: number, walk: Walk): Record<string, unknown> | undefined {
  const path = `model_list[${index}]`;
  const params = isRecord(entry.litellm_params) ? entry.litellm_params : {};
  for (const field of Object.keys(entry)) if (field !== 'model_name' && field !== 'litellm_params') walk.plan.notCarried.push(`${path}.${field}: not carried (model facts come from the gateway's catalogue)`);
  for (const field of Object.keys(params)) if (!READ_PARAMS.has(field)) walk.plan.notCarried.push(`${path}.litellm_params.${field}: no counterpart here`);
  const { provider, model } = providerModel(String(params.model ?? ''), walk.providers);
  if (provider === undefined || !walk.providers.registered.has(provider)) {
    walk.plan.notCarried.push(`${path}.litellm_params.model: ${provider === undefined ? `"${String(params.model)}" names no provider the import knows` : `the provider "${provider}" is not registered in this gateway`}; the deployment was left out`);
    return undefined;
  }
  const target: Record<string, unknown> = { name: recordName(`${provider}-${index}`), provider, override_params: { model } };
  const base = resolved(params.api_base, `${path}.litellm_params.api_base`, walk);
  const settings = walk.providers.byId.get(provider)?.litellmTarget;
  if (settings) {
    // The plugin says how its cloud names resources and deployments (in headers, say).
    const apiVersion = resolved(params.api_version, `${path}.litellm_params.api_version`, walk);
    const { headers, customHost } = settings({ model, ...(base ? { apiBase: base } : {}), ...(apiVersion ? { apiVersion } : {}) });
    if (customHost) target.custom_host = customHost;
    if (headers && Object.keys(headers).length > 0) target.headers = headers;
  } else if (base) target.custom_host = base;
  if (typeof params.weight === 'number') target.weight = params.weight;
  if (typeof params.timeout === 'number') target.request_timeout = Math.round(params.timeout * 1000);
  const credential = deploymentCredential(params, provider, `${String(entry.model_name)}-${index}`, path, walk);
  if (credential !== undefined) target.credential = credential;
  return target;
}

/** The stored credential of a deployment's key (or AWS keys), read now; undefined: the caller's Bearer is used. */
function deploymentCredential(params: Record<string, unknown>, provider: string, label: string, path: string, walk: Walk): string | undefined {
  const at = (field: string) => `${path}.litellm_params.${field}`;
  const apiKey = resolved(params.aws_access_key_id, at('aws_access_key_id'), walk) ?? resolved(params.api_key, at('api_key'), walk);
  const fields: Record<string, string> = {};
  const secret = resolved(params.aws_secret_access_key, at('aws_secret_access_key'), walk);
  const session = resolved(params.aws_session_token, at('aws_session_token'), walk);
  const region = resolved(params.aws_region_name, at('aws_region_name'), walk);
  if (secret) fields['x-gateway-cloud-c-secret-access-key'] = secret;
  if (session) fields['x-gateway-cloud-c-session-token'] = session;
  if (region) fields['x-gateway-cloud-c-region'] = region;
  if (apiKey === undefined && Object.keys(fields).length === 0) return undefined;
  return planCredential(walk.plan, { name: recordName(`litellm-${label}`), provider, ...(apiKey ? { api_key: apiKey } : {}), ...(Object.keys(fields).length > 0 ? { fields } : {}) });
}

/** The fallbacks of the settings: `[{ "<group>": ["<group>", …] }]`, by group. */
function fallbacksOf(value: unknown, path: string, walk: Walk): Map<string, string[]> {
  const found = new Map<string, string[]>();
  if (value === undefined) return found;
  if (!Array.isArray(value)) {
    walk.plan.notCarried.push(`${path}: expected a list of { group: [fallback groups] }`);
    return found;
  }
  for (const item of value) if (isRecord(item)) for (const [group, list] of Object.entries(item)) if (Array.isArray(list)) found.set(group, list.map(String));
  return found;
}

/**
 * A LiteLLM proxy config (`model_list`, `router_settings`, `litellm_settings`) as credentials,
 * routes and model aliases: each model group becomes a stored route (one deployment: single; more:
 * load-balanced by the routing strategy) and an alias of its name; fallbacks make the group's route
 * fall back to the fallback groups' routes; `os.environ/` values are read now, and keys are stored
 * in the vault. What has no counterpart is reported.
 */
export function litellmPlan(config: unknown, providers: LitellmProviders, environment: NodeJS.ProcessEnv): ImportPlan {
  const plan = emptyPlan();
  if (!isRecord(config) || !Array.isArray(config.model_list)) throw new Error('a LiteLLM config has a model_list');
  const walk: Walk = { plan, providers, environment };
  for (const field of Object.keys(config)) if (!['model_list', ...Object.keys(SETTINGS_READ)].includes(field)) plan.notCarried.push(`${field}: not carried (the gateway's own settings and keys apply)`);
  const settings = (name: string): Record<string, unknown> => {
    const value = isRecord(config[name]) ? config[name] : {};
    for (const field of Object.keys(value)) if (!SETTINGS_READ[name].includes(field)) plan.notCarried.push(`${name}.${field}: no counterpart here`);
    return value;
  };
  const router = settings('router_settings');
  const general = settings('litellm_settings');
  const strategy = typeof router.routing_strategy === 'string' ? router.routing_strategy : 'simple-shuffle';
  const policy = POLICIES[strategy] ?? 'weighted';
  if (POLICIES[strategy] === undefined) plan.notCarried.push(`router_settings.routing_strategy: "${strategy}" has no counterpart; groups are balanced by weight`);
  const retries = Number(router.num_retries ?? general.num_retries);
  const timeoutSeconds = Number(router.timeout ?? general.request_timeout);
  const groups = new Map<string, Record<string, unknown>[]>();
  config.model_list.forEach((entry: unknown, index) => {
    if (!isRecord(entry) || typeof entry.model_name !== 'string') return plan.notCarried.push(`model_list[${index}]: no model_name; left out`);
    const target = deploymentTarget(entry, index, walk);
    if (target !== undefined) groups.set(entry.model_name, [...(groups.get(entry.model_name) ?? []), target]);
  });
  const routeOf = (targets: Record<string, unknown>[]): Record<string, unknown> => ({
    strategy: targets.length === 1 ? { mode: 'single' } : { mode: 'loadbalance', policy },
    targets,
    ...(Number.isInteger(retries) && retries >= 0 ? { retry: { attempts: Math.min(retries, 10) } } : {}),
    ...(Number.isFinite(timeoutSeconds) && timeoutSeconds > 0 ? { request_timeout: Math.round(timeoutSeconds * 1000) } : {}),
  });
  const fallbacks = new Map([...fallbacksOf(general.fallbacks, 'litellm_settings.fallbacks', walk), ...fallbacksOf(router.fallbacks, 'router_settings.fallbacks', walk)]);
  for (const [group, targets] of groups) {
    const chain = (fallbacks.get(group) ?? []).filter((next) => {
      if (groups.has(next)) return true;
      plan.notCarried.push(`fallbacks: "${group}" falls back to "${next}", a group not imported`);
      return false;
    });
    const own = routeOf(targets);
    const route = chain.length === 0 ? own : { strategy: { mode: 'fallback' }, targets: [{ name: recordName(group), route: own }, ...chain.map((next) => ({ name: recordName(next), route: routeOf(groups.get(next)!) }))] };
    const name = recordName(`litellm-${group}`);
    plan.routes.push({ name, route });
    plan.aliases.push({ alias: group, route: name });
  }
  return plan;
}
