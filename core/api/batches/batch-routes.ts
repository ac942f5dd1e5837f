import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { errors } from '../../errors.js';
import { readChunks, tooLarge, parseJsonObject } from '../../http/body.js';
import { spoolMultipart } from '../../http/multipart.js';
import type { AuthSlice, GatewayContext, GatewayResponse } from '../../pipeline/context.js';
import type { ProviderPlugin } from '../../spec/provider.js';
import type { OperationHandler } from '../operation.js';
import { ownerOf } from '../protocols/responses/responses-store.js';
import { assertProvider, batchNotFound, type BatchService, renderBatch } from './batch-service.js';
import { type BatchStore, isGatewayBatchId, isGatewayFileId, newFileId, type StoredFile } from './batch-store.js';

/** Most bytes of a `POST /v1/batches` body. */
const BATCH_BODY_LIMIT = 1024 * 1024;
/** `/v1/files`, `/v1/files/{id}`, `/v1/files/{id}/content`, `/v1/batches`, `/v1/batches/{id}`, `/v1/batches/{id}/cancel`. */
const PATH = /^\/v1\/(files|batches)(?:\/([^/]+)(?:\/(content|cancel))?)?$/;

export interface BatchRoutesOptions {
  readonly store: BatchStore;
  readonly service: BatchService;
  /** Largest input file kept (`batches.maxFileBytes`). */
  readonly maxFileBytes: number;
}

const ok = (json: unknown): GatewayResponse => ({ status: 200, headers: {}, body: { json } });

/** OpenAI's file object. */
function renderFile(file: StoredFile): Record<string, unknown> {
  return { id: file.id, object: 'file', bytes: file.bytes, created_at: file.created_at, filename: file.filename, purpose: file.purpose, status: 'processed', status_details: null, expires_at: null };
}

/** `limit` (1 to 100, default 20 for batches, 10 000 for files) and `after` of a list. */
function page<T extends { id: string }>(items: T[], search: string, defaultLimit: number): { data: T[]; hasMore: boolean } {
  const query = new URLSearchParams(search);
  const limitText = query.get('limit');
  const limit = limitText === null ? defaultLimit : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw errors.invalidRequest('limit must be an integer from 1 to 10000.', { param: 'limit', code: 'invalid_batch' });
  const after = query.get('after');
  const start = after === null ? 0 : items.findIndex((item) => item.id === after) + 1;
  const rest = items.slice(start);
  return { data: rest.slice(0, limit), hasMore: rest.length > limit };
}

async function readJson(stream: Readable | undefined): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  if (stream) {
    await readChunks(stream, (chunk) => {
      size += chunk.byteLength;
      if (size > BATCH_BODY_LIMIT) throw tooLarge(BATCH_BODY_LIMIT);
      chunks.push(chunk);
    });
  }
  return parseJsonObject(Buffer.concat(chunks, size));
}

/**
 * `POST /v1/files` for a translated provider: the multipart form (`purpose`: `batch`, `file`) is
 * spooled to a temporary folder as it arrives, at most `maxFileBytes` (413 past it), then kept whole
 * in the shared state until it is deleted.
 */
async function upload(context: GatewayContext, auth: AuthSlice, options: BatchRoutesOptions): Promise<GatewayResponse> {
  const stream = context.request.stream;
  const headers = context.incoming.headers;
  // The pass-through's body stream with the request's headers: what the multipart reader takes from a request.
  const source = { headers: { 'content-type': headers['content-type'], 'content-length': headers['content-length'] }, iterator: (options_: { destroyOnReturn: boolean }) => stream!.iterator(options_) };
  if (!stream) throw errors.invalidRequest('POST /v1/files takes a multipart/form-data body.', { param: 'file', code: 'invalid_content_type' });
  const spooled = await spoolMultipart(source as unknown as IncomingMessage, options.maxFileBytes);
  try {
    const { fields, files } = spooled.form;
    if (fields.purpose !== 'batch') throw errors.invalidRequest(`The provider "${auth.provider.id}" takes files for batches only: purpose must be "batch".`, { param: 'purpose', code: 'invalid_file_purpose' });
    const part = files.find((file) => file.field === 'file');
    if (!part) throw errors.invalidRequest('The form has no "file" part.', { param: 'file', code: 'invalid_batch' });
    if (part.size > options.maxFileBytes) throw tooLarge(options.maxFileBytes);
    const content = await readFile(part.path, 'utf8');
    const file: StoredFile = { id: newFileId(), owner: ownerOf(auth.caller), provider: auth.provider.id, filename: part.filename, purpose: 'batch', bytes: part.size, created_at: Math.floor(Date.now() / 1000) };
    await options.store.putFile(file, content);
    return ok(renderFile(file));
  } finally {
    await spooled.cleanup();
  }
}

async function files(context: GatewayContext, auth: AuthSlice, id: string | undefined, action: string | undefined, options: BatchRoutesOptions): Promise<GatewayResponse> {
  const owner = ownerOf(auth.caller);
  const method = context.incoming.method;
  if (id === undefined) {
    if (method === 'POST') return upload(context, auth, options);
    const all = (await options.store.files(owner)).filter((file) => file.provider === auth.provider.id).sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1));
    const listed = page(all, context.incoming.search, 10_000);
    return ok({ object: 'list', data: listed.data.map(renderFile), first_id: listed.data[0]?.id ?? null, last_id: listed.data.at(-1)?.id ?? null, has_more: listed.hasMore });
  }
  const file = await options.store.file(owner, id);
  if (!file) throw batchNotFound(id, 'file_id');
  assertProvider(file.provider, auth);
  if (action === 'content' && method === 'GET') {
    const content = (await options.store.content(owner, id)) ?? '';
    return { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: { bytes: Buffer.from(content) } };
  }
  if (action === undefined && method === 'GET') return ok(renderFile(file));
  if (action === undefined && method === 'DELETE') {
    await options.store.deleteFile(owner, id);
    return ok({ id, object: 'file', deleted: true });
  }
  throw errors.notFound(`No route for ${method} ${context.incoming.path}.`, { code: 'route_not_found' });
}

async function batches(context: GatewayContext, auth: AuthSlice, id: string | undefined, action: string | undefined, options: BatchRoutesOptions): Promise<GatewayResponse> {
  const owner = ownerOf(auth.caller);
  const method = context.incoming.method;
  const { service } = options;
  if (id === undefined && method === 'POST') return ok(renderBatch(await service.create(context, auth, owner, await readJson(context.request.stream))));
  if (id === undefined && method === 'GET') {
    const all = (await options.store.batches(owner)).filter((batch) => batch.provider === auth.provider.id).sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1));
    const listed = page(all, context.incoming.search, 20);
    return ok({ object: 'list', data: listed.data.map(renderBatch), first_id: listed.data[0]?.id ?? null, last_id: listed.data.at(-1)?.id ?? null, has_more: listed.hasMore });
  }
  if (id !== undefined && action === undefined && method === 'GET') return ok(renderBatch(await service.view(auth, owner, id, context.signal)));
  if (id !== undefined && action === 'cancel' && method === 'POST') return ok(renderBatch(await service.cancel(auth, owner, id, context.signal)));
  throw errors.notFound(`No route for ${method} ${context.incoming.path}.`, { code: 'route_not_found' });
}

/**
 * The pass-through with `/v1/files` and `/v1/batches` served by the gateway where they must be
 * translated: for a provider that declares `operations.batches`, and for any id the gateway issued
 * (`file-gw_…`, `batch_gw_…`, when it holds them). Everything else (OpenAI, Azure and any provider that speaks OpenAI's
 * batches) is passed through as before. The request has been through the auth stage (the caller,
 * the provider, its credential) and the limits' admission like any pass-through.
 */
export function withBatches(passthrough: OperationHandler, options: BatchRoutesOptions): OperationHandler {
  return {
    ...passthrough,
    async answerLocally(context: GatewayContext, provider: ProviderPlugin) {
      const match = PATH.exec(context.incoming.path);
      const auth = context.auth;
      if (!match || !auth) return undefined;
      const [, kind, id, action] = match;
      const translated = provider.operations.batches !== undefined;
      if (id === undefined && !translated) return undefined;
      if (id !== undefined && !(kind === 'files' ? isGatewayFileId(id) : isGatewayBatchId(id))) return undefined;
      // An id of the gateway's form sent to a provider that speaks OpenAI's batches is the provider's
      // unless the gateway holds it.
      if (id !== undefined && !translated && !(await options.store.holds(kind as 'files' | 'batches', id))) return undefined;
      return kind === 'files' ? files(context, auth, id, action, options) : batches(context, auth, id, action, options);
    },
  };
}
