import { withKeyReferences } from '../routing/key-references.js';
import { invalidRoute, type Route } from '../routing/route.js';
import type { VirtualKeyRecord } from '../vault/records.js';
import { VIRTUAL_KEY_ID_PREFIX, VIRTUAL_KEY_PREFIX, VIRTUAL_KEY_UNKNOWN } from '../vault/virtual-keys.js';

/**
 * Virtual keys in routes, as the admin API (and the CLI) store and show them. A key's value is a
 * secret: a route stores the key's id (`vk_…`) and shows it with the key's hint
 * (`virtual_key_hint: "vk-…a1b2"`), never the value. Routes stored before held values; the vault
 * rewrites them to ids as it reads them (`routeWithKeyIds`), and {@link shownRoute} never shows a
 * value whatever it finds.
 */

/** The key lookups this needs (the vault's `VirtualKeys`, cached and invalidated on every instance). */
export interface KeyLookups {
  lookup(value: string): Promise<VirtualKeyRecord | undefined>;
  lookupId(id: string): Promise<VirtualKeyRecord | undefined>;
}


/** The masked form of a key value, like a key's `key_hint`. */
const hintOf = (value: string): string => `${VIRTUAL_KEY_PREFIX}…${value.slice(-4)}`;

/**
 * A route given to the admin API with each virtual key named by its id: a value (`vk-…`) becomes
 * its key's id, an id (`vk_…`) is kept. The key must exist and be bound to a provider (a key that
 * names a route could name this very route: nest that route instead); otherwise 400
 * `invalid_route` whose `param` is the field under `param` (`route.targets[1].virtual_key`).
 */
export async function storedKeyReferences(route: Route, param: string, keys: KeyLookups): Promise<Route> {
  return withKeyReferences(route, async (reference, path) => {
    const at = `${param}.${path}`;
    const record = reference.startsWith(VIRTUAL_KEY_PREFIX) ? await keys.lookup(reference) : reference.startsWith(VIRTUAL_KEY_ID_PREFIX) ? await keys.lookupId(reference) : undefined;
    if (!record) throw invalidRoute('not a current virtual key (give its id, vk_…, or its value).', { param: at });
    if (record.route !== undefined) throw invalidRoute('this virtual key names a route; nest that route in a target instead.', { param: at });
    return { virtual_key: record.id };
  });
}

/**
 * A route as the admin API shows it: each virtual key by its id with `virtual_key_hint`. A value
 * (in a config route, or a stored one not rewritten yet) is shown as its key's id, or as
 * `vk_unknown` with the value's hint when no key has it: never as itself.
 */
export async function shownRoute(route: Route, keys: KeyLookups): Promise<Route> {
  return withKeyReferences(route, async (reference) => {
    if (reference.startsWith(VIRTUAL_KEY_PREFIX)) {
      const record = await keys.lookup(reference);
      return record ? { virtual_key: record.id, virtual_key_hint: record.key_hint } : { virtual_key: VIRTUAL_KEY_UNKNOWN, virtual_key_hint: hintOf(reference) };
    }
    if (!reference.startsWith(VIRTUAL_KEY_ID_PREFIX)) return undefined;
    const record = await keys.lookupId(reference);
    return record ? { virtual_key: record.id, virtual_key_hint: record.key_hint } : undefined;
  });
}

/** A record holding a route (a stored route's version, a model alias), shown with {@link shownRoute}. */
export async function withShownRoute<T extends { readonly route?: Route }>(record: T, keys: KeyLookups): Promise<T> {
  return record.route === undefined ? record : { ...record, route: await shownRoute(record.route, keys) };
}
