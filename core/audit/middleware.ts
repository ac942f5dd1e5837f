import type { Context } from 'koa';
import { clientAddress } from '../http/client-address.js';
import type { AuditActor, AuditChanges, AuditInput, AuditOutcome, AuditTarget } from './event.js';

/** What a route handler tells {@link auditedRoute} about its change, on `koa.state.audit`. */
export interface AuditNote {
  target?: AuditTarget;
  /** Build it with `auditChanges(before, after)`: secrets never. */
  changes?: AuditChanges;
}

/** Where a request came from, as events record it: the client address (as the failed-auth limiter counts it) and the user agent (256 characters at most). */
export function requestOrigin(koa: Context, trustProxy = 0): Pick<AuditInput, 'address' | 'userAgent'> {
  const userAgent = koa.get('user-agent').slice(0, 256);
  return { address: clientAddress(koa.req, trustProxy), ...(userAgent ? { userAgent } : {}) };
}

/** The outcome an answer's status means: 2xx and 3xx success, 401 and 403 denied, anything else failure. */
export const outcomeOf = (status: number): AuditOutcome => (status < 400 ? 'success' : status === 401 || status === 403 ? 'denied' : 'failure');

export interface AuditedRouteOptions {
  readonly action: string;
  /** Who called (the guard before this middleware knows). */
  readonly actor: (koa: Context) => AuditActor;
  /** Appends the event; a rejection is the caller's to log (the route's answer stands). */
  readonly record: (input: AuditInput) => Promise<unknown>;
  readonly trustProxy?: number;
}

/**
 * Koa middleware that writes one audit event per request of a changing admin route, after the
 * route ran: its outcome from the status (or the error thrown), its target and changes from what
 * the handler put on `koa.state.audit` ({@link AuditNote}), who and from where. The event is
 * written before the answer goes out, so a client that saw the change can find it in the trail.
 */
export function auditedRoute(options: AuditedRouteOptions) {
  return async (koa: Context, next: () => Promise<unknown>): Promise<void> => {
    let status: number;
    try {
      await next();
      status = koa.status;
    } catch (error) {
      status = typeof (error as { status?: unknown }).status === 'number' ? (error as { status: number }).status : 500;
      await write(koa, status);
      throw error;
    }
    await write(koa, status);
  };

  function write(koa: Context, status: number) {
    const note = (koa.state.audit ?? {}) as AuditNote;
    return options.record({ actor: options.actor(koa), action: options.action, outcome: outcomeOf(status), ...note, ...requestOrigin(koa, options.trustProxy) });
  }
}
