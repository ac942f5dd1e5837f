import type { Context, Middleware } from 'koa';
import { errors, type GatewayError } from '../errors.js';
import { tooLarge } from '../http/body.js';

/** The body `jsonBody` parsed, for the route after it. */
export const requestJson = (koa: Context): Record<string, unknown> => koa.request.body as Record<string, unknown>;

type KoaBody = typeof import('koa-body');
let loading: Promise<KoaBody> | undefined;

/** koa-body (with zod and formidable) takes ~150 ms to import: it loads on the first body to parse, not with the gateway. */
const loadKoaBody = (): Promise<KoaBody> => (loading ??= import('koa-body'));

const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The gateway's answer to a body koa-body could not read: 413 past the limit, else 400 `invalid_json`. */
function bodyError(error: Error & { status?: number; type?: string }, limitBytes: number): GatewayError | Error {
  if (error.status === 413) return tooLarge(limitBytes);
  if (error instanceof SyntaxError || (error.status !== undefined && error.status < 500)) {
    return errors.invalidRequest(`The request body is not valid JSON: ${error.message}`, { code: 'invalid_json' });
  }
  return error;
}

/**
 * Parses a JSON request body of at most `limitBytes` with koa-body, for the admin API and the
 * dashboard; the route reads it with {@link requestJson}. The body is read as JSON whatever its
 * content type (a route that wants `application/json` checks it first). Errors: 413
 * `body_too_large`, 400 `invalid_json` when it is not JSON or not an object. Mount it after the
 * guard, so nothing is read before the caller is known.
 */
export function jsonBody(limitBytes: number): Middleware {
  let parse: Middleware | undefined;
  const options: Parameters<KoaBody['koaBody']>[0] = {
    json: true,
    jsonTypes: ['*/*'],
    jsonLimit: limitBytes,
    // Any JSON is parsed, so a string or an array gets the "not an object" answer below.
    jsonStrict: false,
    urlencoded: false,
    text: false,
    multipart: false,
    onError(error) {
      throw bodyError(error, limitBytes);
    },
  };
  return async (koa, next) => {
    parse ??= (await loadKoaBody()).koaBody(options);
    await parse(koa, async () => {});
    if (!isJsonObject(koa.request.body)) throw errors.invalidRequest('The request body must be a JSON object.', { code: 'invalid_json' });
    return next();
  };
}
