import type { AuthSlice, GatewayContext, RequestSlice } from '../pipeline/context.js';

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
  const view = new Proxy(context, {
    get: (target, key) => (key === 'auth' ? auth : key === 'request' ? request : Reflect.get(target, key)),
    set: (_target, key) => {
      throw new TypeError(`Cannot assign to read only property '${String(key)}' of an attempt's view of the context`);
    },
    defineProperty: (_target, key) => {
      throw new TypeError(`Cannot define property '${String(key)}' on an attempt's view of the context`);
    },
  });
  views.set(view, context);
  return view;
}

const views = new WeakMap<GatewayContext, GatewayContext>();

/**
 * The request's own context, given it or an attempt's view of it: what state kept per request
 * (rather than per attempt) is keyed by, as the Responses operation's conversation is.
 */
export const requestContextOf = (context: GatewayContext): GatewayContext => views.get(context) ?? context;

/** The auth of the target whose answer the client gets: a routed request's attempt (the last one tried when none answered), else the auth stage's. */
export const servingAuth = (context: GatewayContext): AuthSlice | undefined => context.routed?.tried?.auth ?? context.auth;

/** The request as the target whose answer the client gets was sent it (a routed attempt's, with its `override_params`), else the request. */
export const servedRequest = (context: GatewayContext): GatewayContext['request'] => context.routed?.tried?.request ?? context.request;
