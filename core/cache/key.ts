import { createHash } from 'node:crypto';
import type { AuthSlice, GatewayContext } from '../pipeline/context.js';
import type { RequestFacts } from '../routing/conditions.js';
import { conditionalTarget, requestFacts } from '../routing/facts.js';
import type { ResolvedRoute, ResolvedTarget } from '../routing/plan.js';
import type { Caller } from '../spec/key-resolver.js';

/** JSON with every object's keys sorted, so that the order a client wrote them in changes nothing. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const fields = Object.keys(record)
    .filter((field) => record[field] !== undefined)
    .sort();
  return `{${fields.map((field) => `${JSON.stringify(field)}:${canonicalJson(record[field])}`).join(',')}}`;
}

/** A short digest of values (base64url SHA-256 of their canonical JSON). */
export function digest(...parts: unknown[]): string {
  return createHash('sha256').update(canonicalJson(parts)).digest('base64url');
}

/**
 * The namespace a request reads and writes: a route's shared one (`shared:<name>`), else the
 * caller's own (`key:<virtual key id>`, or `account`). Tags are prefixed so a shared name can never
 * be taken for a key's own namespace.
 */
export function namespaceOf(caller: Caller, shared: string | undefined): string {
  if (shared !== undefined) return `shared:${shared}`;
  return caller.type === 'account' ? 'account' : `key:${caller.id}`;
}

/** The headers that choose an upstream (the API's cloud headers: deployment, project, region). */
function upstreamHeaders(headers: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const chosen: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && name.startsWith('x-gateway-cloud-')) chosen[name] = value;
  return chosen;
}

const targetIdentity = (auth: AuthSlice) => ({
  provider: auth.provider.id,
  baseUrl: auth.target.baseUrl,
  headers: upstreamHeaders(auth.target.headers),
  forwarded: auth.forwardHeaders,
});

const resolvedIdentity = (target: ResolvedTarget, facts: RequestFacts): unknown =>
  target.route ? { route: planIdentity(target.route, facts) } : { ...targetIdentity(target.auth!), overrides: target.target.override_params ?? null };

/**
 * A route level's targets; a conditional level's only the one its conditions choose for this
 * request (by its metadata, model, `user` or caller), so that requests the route sends to other
 * targets never share an answer (null when none is chosen: the route refuses the request).
 */
function planIdentity(plan: ResolvedRoute, facts: RequestFacts): unknown {
  if (plan.route.strategy.mode === 'conditional') {
    const chosen = conditionalTarget(plan, facts);
    return { chosen: chosen === undefined ? null : { name: chosen.name, target: resolvedIdentity(chosen, facts) } };
  }
  return plan.targets.map((target) => resolvedIdentity(target, facts));
}

/**
 * Where a request's answer comes from: on the plain path its provider, base URL, cloud headers and
 * forwarded headers; on a route every target's (with its `override_params`), since any of them may
 * give the answer, except where a conditional route chooses one: then that one's.
 */
export function upstreamIdentity(context: GatewayContext): unknown {
  return context.routing ? { route: planIdentity(context.routing.plan, requestFacts(context)) } : targetIdentity(context.auth!);
}
