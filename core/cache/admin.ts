import type Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from '../errors.js';
import type { ResponseCache } from './response-cache.js';

/** The admin API's guard (core/admin/guard.ts): the middleware declaring the permission a route needs; the admin surface hands it in. */
type AdminCheck = { require(permission: 'cache.purge'): (koa: Context, next: () => Promise<unknown>) => Promise<void> };

const NAME = /^[A-Za-z0-9._:-]{1,128}$/;

const invalid = (message: string, { param }: { param: string }) => errors.invalidRequest(message, { param, code: 'invalid_query' });

function one(koa: Context, name: string): string | undefined {
  const value = koa.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !NAME.test(value)) throw invalid(`${name} must be given once, as 1 to 128 letters, digits or . _ : -.`, { param: name });
  return value;
}

/**
 * `DELETE /admin/cache` (account key or dashboard session): `?namespace=<name>` empties a shared
 * namespace a route names, `?key=<virtual key id>` (or `account`) a caller's own namespace, and
 * `?all=true` the whole cache, semantic indexes included. Answers `{ deleted, namespace }`.
 */
export function mountCacheAdmin(router: Router, parts: { guard: AdminCheck; cache: ResponseCache }): void {
  router.delete('/admin/cache', parts.guard.require('cache.purge'), async (koa) => {
    const namespace = one(koa, 'namespace');
    const key = one(koa, 'key');
    const all = koa.query.all;
    if (all !== undefined && all !== 'true') throw invalid('all must be true.', { param: 'all' });
    if ([namespace, key, all].filter((selector) => selector !== undefined).length !== 1) {
      throw invalid('Give exactly one of namespace, key or all=true.', { param: 'namespace' });
    }
    const tag = all !== undefined ? undefined : key !== undefined ? (key === 'account' ? 'account' : `key:${key}`) : `shared:${namespace}`;
    koa.body = { deleted: await parts.cache.remove(tag), namespace: tag ?? null };
  });
}
