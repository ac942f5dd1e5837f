import type { CacheEmbedding, Route, Target } from './route.js';

/**
 * Where a route names virtual keys: its targets' `virtual_key` (nested routes' included) and its
 * cache's embeddings target. A stored route names a key by reference (the key's id, `vk_…`); a
 * config file or an account key's inline route may give a key's value (`vk-…`), which is resolved
 * per request and never stored nor shown (docs/routing.md, "Virtual keys as targets").
 */

/** One place a route names a virtual key: the reference as written and its path in the route (`targets[1].virtual_key`). */
export interface KeyReference {
  readonly reference: string;
  readonly path: string;
}

/** Every virtual key a route names, with its path, targets first (nested after their parent), then the embeddings target. */
export function keyReferences(route: Route): KeyReference[] {
  const found: KeyReference[] = [];
  const visit = (level: Route, prefix: string): void =>
    level.targets.forEach((target, index) => {
      const at = `${prefix}targets[${index}]`;
      if (target.virtual_key !== undefined) found.push({ reference: target.virtual_key, path: `${at}.virtual_key` });
      if (target.route) visit(target.route, `${at}.route.`);
    });
  visit(route, '');
  const embedding = route.cache?.embedding;
  if (embedding?.virtual_key !== undefined) found.push({ reference: embedding.virtual_key, path: 'cache.embedding.virtual_key' });
  return found;
}

/**
 * What a reference becomes: the `virtual_key` written in its place, and fields shown beside it
 * (`virtual_key_hint`). Undefined keeps the target as it is.
 */
export type KeyReferenceChange = { readonly virtual_key: string; readonly virtual_key_hint?: string } | undefined;

/**
 * The route with each virtual key reference replaced as `change` says (asked once per distinct
 * reference, in parallel); the same object when nothing changes. Used to store references instead
 * of values, and to show a key's id and hint.
 */
export async function withKeyReferences(route: Route, change: (reference: string, path: string) => Promise<KeyReferenceChange>): Promise<Route> {
  const references = keyReferences(route);
  if (references.length === 0) return route;
  const distinct = [...new Map(references.map((entry) => [entry.reference, entry.path])).entries()];
  const changes = new Map(await Promise.all(distinct.map(async ([reference, path]) => [reference, await change(reference, path)] as const)));
  if ([...changes.values()].every((value) => value === undefined)) return route;
  const apply = <T extends Target | CacheEmbedding>(target: T): T => {
    const replaced = target.virtual_key === undefined ? undefined : changes.get(target.virtual_key);
    if (replaced === undefined) return target;
    // The hint goes right after the key, where a reader looks for it.
    const entries = Object.entries(target).flatMap(([field, value]) =>
      field === 'virtual_key' ? [[field, replaced.virtual_key], ...(replaced.virtual_key_hint !== undefined ? [['virtual_key_hint', replaced.virtual_key_hint]] : [])] : field === 'virtual_key_hint' ? [] : [[field, value]],
    );
    return Object.fromEntries(entries) as T;
  };
  const level = (current: Route): Route => ({
    ...current,
    targets: current.targets.map((target) => {
      const applied = apply(target);
      return applied.route ? { ...applied, route: level(applied.route) } : applied;
    }),
  });
  const next = level(route);
  const embedding = route.cache?.embedding;
  return embedding === undefined ? next : { ...next, cache: { ...route.cache!, embedding: apply(embedding) } };
}
