import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { errors } from '../../../errors.js';
import { clientAddress } from '../../../http/client-address.js';
import { flattenHeaders } from '../../../http/headers.js';
import type { GatewayContext } from '../../../pipeline/context.js';
import type { Caller } from '../../../spec/key-resolver.js';
import { clientItems, clientResponse } from './responses-objects.js';
import { conversationOf, ownerOf, type ResponseStore } from './responses-store.js';
import { invalid } from '../../validate.js';

export interface ResponsesRoutesOptions {
  readonly store: ResponseStore;
  /** The caller of a request, as the auth stage identifies it (401/429 otherwise). */
  readonly identify: (incoming: GatewayContext['incoming']) => Promise<Caller>;
  readonly trustProxy: number;
}

const notFound = (id: string) => errors.notFound(`No response found with id '${id}'.`, { param: 'response_id', code: 'not_found' });

/** The `include` query parameter (`include=…` or `include[]=…`, repeated). */
function includeOf(koa: KoaContext): string[] {
  const values = [koa.query.include, koa.query['include[]']].flat().filter((value): value is string => typeof value === 'string');
  return values;
}

function listQuery(koa: KoaContext): { limit: number; order: 'asc' | 'desc'; after?: string } {
  const limitText = koa.query.limit;
  const limit = limitText === undefined ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalid('must be an integer from 1 to 100.', { param: 'limit' });
  const order = koa.query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalid("must be 'asc' or 'desc'.", { param: 'order' });
  const after = typeof koa.query.after === 'string' ? koa.query.after : undefined;
  return { limit, order, ...(after ? { after } : {}) };
}

/**
 * `GET /v1/responses/{id}`, `GET /v1/responses/{id}/input_items` and `DELETE /v1/responses/{id}`:
 * the stored responses, each scoped to the key that made them (another key gets 404, as for an id
 * that does not exist). The caller's key is read as the auth stage reads it; no provider is called.
 */
export function mountResponsesRoutes(router: Router, options: ResponsesRoutesOptions): void {
  const owner = async (koa: KoaContext): Promise<string> =>
    ownerOf(await options.identify({ method: koa.method, path: koa.path, search: '', headers: flattenHeaders(koa.req.headers), clientAddress: clientAddress(koa.req, options.trustProxy) }));

  router.get('/v1/responses/:id', async (koa) => {
    const id = koa.params.id;
    const record = await options.store.get(await owner(koa), id);
    if (!record) throw notFound(id);
    koa.body = clientResponse(record.response, includeOf(koa));
  });

  router.delete('/v1/responses/:id', async (koa) => {
    const id = koa.params.id;
    if (!(await options.store.delete(await owner(koa), id))) throw notFound(id);
    koa.body = { id, object: 'response', deleted: true };
  });

  router.get('/v1/responses/:id/input_items', async (koa) => {
    const id = koa.params.id;
    const query = listQuery(koa);
    const conversation = await conversationOf(options.store, await owner(koa), id, false);
    if (!conversation) throw notFound(id);
    let items = clientItems(
      conversation.map((entry) => entry.item),
      includeOf(koa),
    );
    if (query.order === 'desc') items = items.reverse();
    if (query.after !== undefined) {
      const at = items.findIndex((item) => item.id === query.after);
      if (at < 0) throw invalid(`names no item of this response: "${query.after}".`, { param: 'after' });
      items = items.slice(at + 1);
    }
    const page = items.slice(0, query.limit);
    koa.body = { object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: items.length > page.length };
  });
}
