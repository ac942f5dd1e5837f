import type { Context } from 'koa';
import { clientAddress } from '../http/client-address.js';
import type { AuditInput } from './event.js';

/** Where a request came from, as events record it: the client address (as the failed-auth limiter counts it) and the user agent (256 characters at most). */
export function requestOrigin(koa: Context, trustProxy = 0): Pick<AuditInput, 'address' | 'userAgent'> {
  const userAgent = koa.get('user-agent').slice(0, 256);
  return { address: clientAddress(koa.req, trustProxy), ...(userAgent ? { userAgent } : {}) };
}
