import type { Context } from 'koa';
import type { AccountKey } from '../identity/account-key.js';
import { errors, type GatewayError } from '../errors.js';
import type { FailedAuthLimiter } from '../identity/failed-auth.js';
import { clientAddress } from '../http/client-address.js';

/** A second way to prove the account holder (the dashboard's session cookie), checked after the header. */
export interface AdminCredentialCheck {
  /** True when the request carries a valid credential of this kind. */
  verify(koa: Context): boolean | Promise<boolean>;
}

/**
 * Guards every admin route: the account API key in `x-gateway-api-key` (a virtual key is refused
 * with 403), or any registered {@link AdminCredentialCheck} such as a dashboard session.
 */
export class AdminGuard {
  private readonly checks: AdminCredentialCheck[] = [];
  private readonly otherKeys: Array<(key: string) => boolean | Promise<boolean>> = [];

  constructor(
    private readonly accountKey: AccountKey,
    /** Wrong keys are counted per client address (429 past the limit); absent: not limited. */
    private readonly throttle: { failedAuth?: FailedAuthLimiter; trustProxy?: number } = {},
  ) {}

  /** Adds a credential kind (e.g. the dashboard's session cookie). */
  accept(check: AdminCredentialCheck): void {
    this.checks.push(check);
  }

  /** Registers a recogniser of valid non-account keys (virtual keys): those get 403 instead of 401. */
  recognise(isKnownKey: (key: string) => boolean | Promise<boolean>): void {
    this.otherKeys.push(isKnownKey);
  }

  /** Throws 401 (no or wrong key) or 403 (a key that is not the account key); returns when allowed. */
  async check(koa: Context): Promise<void> {
    const key = koa.get('x-gateway-api-key');
    if (key) {
      if (this.accountKey.matches(key)) return;
      for (const isKnownKey of this.otherKeys) {
        if (await isKnownKey(key)) {
          throw errors.permission('The admin API needs the account API key; this key may not use it.', { code: 'admin_forbidden' });
        }
      }
      throw refusedKey(koa, errors.authentication('The admin API needs the account API key in x-gateway-api-key.', { code: 'invalid_api_key' }), this.throttle);
    }
    for (const check of this.checks) if (await check.verify(koa)) return;
    throw errors.authentication('The admin API needs the account API key in x-gateway-api-key.', { code: 'invalid_api_key' });
  }

  /** Koa middleware form of {@link check}. */
  readonly middleware = async (koa: Context, next: () => Promise<unknown>): Promise<void> => {
    await this.check(koa);
    await next();
  };
}

/** A wrong key's refusal: `refusal` (401), or 429 once this client address, or all, failed too often. */
export function refusedKey(koa: Context, refusal: GatewayError, throttle: { failedAuth?: FailedAuthLimiter; trustProxy?: number }): GatewayError {
  return throttle.failedAuth?.failure(clientAddress(koa.req, throttle.trustProxy ?? 0), refusal) ?? refusal;
}
