import { pipeline } from 'node:stream';
import { errors } from '../errors.js';
import { endToEndHeaders } from '../http/headers.js';
import { limitedStream, tooLarge } from '../http/body.js';
import type { OperationHandler } from './operation.js';

/** Request headers a pass-through carries upstream besides auth and `x-gateway-forward-headers`. */
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);
const PASSED = ['content-type', 'content-length', 'accept', 'content-encoding'];

/**
 * Any other `/v1/<path>` (POST, GET, PUT, DELETE): forwarded to the provider's base URL + path with
 * its auth applied, and answered exactly as the provider answered (status, headers minus hop-by-hop
 * and minus `Set-Cookie` and `Access-Control-*`, bytes), streamed both ways. See {@link createPassthrough}.
 */
export const passthrough: OperationHandler = {
  name: 'passthrough',
  mapsErrors: false,

  async parse(request, options) {
    if (!METHODS.has(request.method ?? '')) {
      throw errors.methodNotAllowed(`Pass-through accepts GET, POST, PUT and DELETE, not ${request.method}.`, {
        code: 'method_not_allowed',
        headers: { allow: 'GET, POST, PUT, DELETE' },
      });
    }
    const hasBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
    if (!hasBody) return { streaming: false };
    const declared = Number(request.headers['content-length']);
    if (declared > options.bodyLimitBytes) throw tooLarge(options.bodyLimitBytes);
    // pipeline (not pipe) so that an aborted upload destroys both sides instead of erroring unheard.
    return { stream: pipeline(request, limitedStream(options.bodyLimitBytes), () => {}), streaming: false };
  },

  toUpstream(context, provider, target) {
    const pathAndQuery = context.incoming.path.slice('/v1'.length) + context.incoming.search;
    const headers: Record<string, string> = {};
    for (const name of PASSED) {
      const value = context.incoming.headers[name];
      if (value !== undefined) headers[name] = value;
    }
    return {
      method: context.incoming.method as 'GET' | 'POST' | 'PUT' | 'DELETE',
      url: provider.passthroughUrl?.(pathAndQuery, target) ?? target.baseUrl + pathAndQuery,
      headers,
      body: context.request.stream ?? null,
    };
  },

  async respond(_context, _provider, forward) {
    return { status: forward.status, headers: endToEndHeaders(forward.headers), body: { stream: forward.body } };
  },
};

/**
 * The pass-through with the config's `passthrough` settings: `relayUnsafeHeaders` keeps the
 * upstream's `Set-Cookie` and `Access-Control-*` headers in its answers.
 */
export function createPassthrough(options: { relayUnsafeHeaders?: boolean } = {}): OperationHandler {
  if (!options.relayUnsafeHeaders) return passthrough;
  return {
    ...passthrough,
    async respond(_context, _provider, forward) {
      return { status: forward.status, headers: endToEndHeaders(forward.headers, { relayUnsafe: true }), body: { stream: forward.body } };
    },
  };
}
