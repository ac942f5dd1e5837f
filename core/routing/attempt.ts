import type { AuthSlice, GatewayContext, RequestSlice } from '../pipeline/context.js';

/**
 * What a view answers with the request's own context. A key the view knows rather than a WeakMap
 * from views to contexts: V8's young-generation collector keeps a WeakMap entry's value alive, so
 * every routed request's context was promoted to the old generation (the bench's fallback route
 * held 300 MB of heap instead of 50, and spent ~30 % more CPU per request).
 */
const REQUEST_CONTEXT = Symbol('request context');

/**
 * The context as one routed attempt's target sees it: `auth` and `request` are the attempt's, every
 * other field is read through from the request's own context (live: `transform`, `guardrail`,
 * `cache` as they are when read). The view is frozen, so a write to it throws rather than landing
 * on the view and being lost; what an operation records as it maps the answer (usage, units) goes
 * into the slices it reads through, as on the plain path.
 */
export function attemptView(context: GatewayContext, auth: AuthSlice, request: RequestSlice): GatewayContext {
  // A proxy, not an object whose prototype is the context: an object used as a prototype is turned
  // into V8's prototype mode, which made every later read of the request's context slower (a routed
  // request cost ~60 % more CPU at c=50, and the process held more memory).
  return new Proxy(context, {
    get: (target, key) => (key === 'auth' ? auth : key === 'request' ? request : key === REQUEST_CONTEXT ? target : Reflect.get(target, key)),
    set: (_target, key) => {
      throw new TypeError(`Cannot assign to read only property '${String(key)}' of an attempt's view of the context`);
    },
    defineProperty: (_target, key) => {
      throw new TypeError(`Cannot define property '${String(key)}' on an attempt's view of the context`);
    },
  });
}

/**
 * The request's own context, given it or an attempt's view of it: what state kept per request
 * (rather than per attempt) is keyed by, as the Responses operation's conversation is.
 */
export const requestContextOf = (context: GatewayContext): GatewayContext => (context as GatewayContext & { [REQUEST_CONTEXT]?: GatewayContext })[REQUEST_CONTEXT] ?? context;

/** The auth of the target whose answer the client gets: a routed request's attempt (the last one tried when none answered), else the auth stage's. */
export const servingAuth = (context: GatewayContext): AuthSlice | undefined => context.routed?.tried?.auth ?? context.auth;

/** The request as the target whose answer the client gets was sent it (a routed attempt's, with its `override_params`), else the request. */
export const servedRequest = (context: GatewayContext): GatewayContext['request'] => context.routed?.tried?.request ?? context.request;
