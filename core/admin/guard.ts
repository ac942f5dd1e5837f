import type { Context } from 'koa';
import type { AccountKey } from '../identity/account-key.js';
import { errors, type GatewayError } from '../errors.js';
import type { FailedAuthLimiter } from '../identity/failed-auth.js';
import { clientAddress } from '../http/client-address.js';
import { Access, type Principal } from '../org/access.js';
import type { AuditInput } from '../audit/event.js';
import { requestOrigin } from '../audit/origin.js';
import { PERMISSIONS, type Permission } from '../org/permissions.js';
import type { OrganizationStore } from '../org/store.js';
import { TOKEN_PREFIX } from '../org/store.js';

/** Who a second kind of credential (the dashboard's session cookie) proves the caller to be. */
export type PrincipalReference = { readonly kind: 'account' } | { readonly kind: 'user'; readonly id: string };

/** A second way to prove who calls (the dashboard's session cookie), checked after the key headers. */
export interface AdminCredentialCheck {
  /** Who the request's credential of this kind belongs to; undefined when it carries none (or an invalid one). */
  verify(koa: Context): PrincipalReference | undefined | Promise<PrincipalReference | undefined>;
}

/** Where the guard writes an event for every changing admin call (the audit trail; a failure is the sink's to log). */
export interface AdminAuditSink {
  record(event: AuditInput): Promise<unknown>;
}

/** What a handler adds to its call's audit event: the target it created, the fields it changed. */
export interface AuditNote {
  target?: { type: string; id: string };
  changes?: Record<string, { before?: unknown; after?: unknown }>;
}

/**
 * A middleware that declares what its route needs: a permission, `signed-in` (any admin credential:
 * `GET /admin/me`), or `null` (an open route, e.g. a public document).
 */
export type DeclaredMiddleware = ((koa: Context, next: () => Promise<unknown>) => Promise<void>) & { readonly permission: Permission | 'signed-in' | null };

/** The access of the admin call being handled (set by {@link AdminGuard.require}). */
export const accessOf = (koa: Context): Access => {
  const access = koa.state.access as Access | undefined;
  if (!access) throw new Error('accessOf: the route did not declare a permission with guard.require');
  return access;
};

/** Adds to the call's audit event. */
export const noteAudit = (koa: Context, note: AuditNote): void => {
  const current = (koa.state.audit as AuditNote | undefined) ?? {};
  koa.state.audit = { ...current, ...note };
};

const CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Guards every admin route. Each route declares the permission it needs with {@link require}; the
 * caller is the account key (the owner), a personal access token or a service account's token (in
 * `x-gateway-api-key` or `Authorization: Bearer`), or a dashboard session; a virtual key is refused
 * with 403. Lacking the permission everywhere is 403; the handlers then answer 404 for objects the
 * caller may not see. Every changing call writes exactly one audit event, whatever its outcome.
 */
export class AdminGuard {
  private readonly checks: AdminCredentialCheck[] = [];
  private readonly otherKeys: Array<(key: string) => boolean | Promise<boolean>> = [];
  private auditSink: AdminAuditSink | undefined;

  constructor(
    private readonly accountKey: AccountKey,
    /** Wrong keys are counted per client address (429 past the limit); absent: not limited. */
    private readonly throttle: { failedAuth?: FailedAuthLimiter; trustProxy?: number } = {},
    private readonly organization?: {
      readonly store: OrganizationStore;
      /** True when `auth.accountKey` is `disabled` and an active owner user exists. */
      readonly accountKeyDisabled: () => Promise<boolean>;
      /** True for the SCIM bearer token (`GATEWAY_SCIM_TOKEN`), compared in constant time. */
      readonly isScimToken?: (value: string) => boolean;
    },
  ) {}

  /** Adds a credential kind (e.g. the dashboard's session cookie). */
  accept(check: AdminCredentialCheck): void {
    this.checks.push(check);
  }

  /** Registers a recogniser of valid non-admin keys (virtual keys): those get 403 instead of 401. */
  recognise(isKnownKey: (key: string) => boolean | Promise<boolean>): void {
    this.otherKeys.push(isKnownKey);
  }

  /** Where changing calls are recorded (the audit trail). */
  auditTo(sink: AdminAuditSink): void {
    this.auditSink = sink;
  }

  /** The middleware of a route that needs `permission`: 401 without a valid admin credential, 403 without the permission anywhere. */
  require(permission: Permission): DeclaredMiddleware {
    if (!Object.hasOwn(PERMISSIONS, permission)) throw new Error(`unknown permission ${permission}`);
    const middleware = async (koa: Context, next: () => Promise<unknown>): Promise<void> => {
      const audited = CHANGING.has(koa.method);
      let access: Access | undefined;
      try {
        access = await this.access(koa);
        koa.state.access = access;
        if (!access.holdsAnywhere(permission)) {
          throw errors.permission(`Your role does not allow this (it needs the ${permission} permission: ${PERMISSIONS[permission]}).`, { code: 'permission_denied' });
        }
        await next();
        if (audited) await this.audit(koa, access, koa.status >= 400 ? 'failure' : 'success');
        // A token used to read: one event a minute per token (a changing call's event names its token already).
        else if (koa.state.tokenUse !== undefined) await this.auditSink?.record({ actor: access.actor, action: 'tokens.use', target: { type: 'token', id: koa.state.tokenUse as string }, outcome: 'success', ...requestOrigin(koa, this.throttle.trustProxy ?? 0) });
      } catch (error) {
        const status = (error as GatewayError).status;
        // Refused calls are recorded too, but not each attempt past the failed-auth limit (429).
        if (audited && !(access === undefined && status === 429)) await this.audit(koa, access, status === 401 || status === 403 || status === 404 ? 'denied' : 'failure');
        throw error;
      }
    };
    return Object.assign(middleware, { permission });
  }

  /** The middleware of a route any admin credential may call (who am I). */
  authenticated(): DeclaredMiddleware {
    const middleware = async (koa: Context, next: () => Promise<unknown>): Promise<void> => {
      koa.state.access = await this.access(koa);
      await next();
    };
    return Object.assign(middleware, { permission: 'signed-in' as const });
  }

  /** The middleware of a route open to anyone (a public document): declared, so the start-up check knows it is meant. */
  open(): DeclaredMiddleware {
    return Object.assign(async (_koa: Context, next: () => Promise<unknown>) => void (await next()), { permission: null });
  }

  /** Who calls, with what they may do; 401 (429 after too many failures) or 403 as {@link require} says. */
  async access(koa: Context): Promise<Access> {
    const key = koa.get('x-gateway-api-key') || /^Bearer\s+(\S+)\s*$/i.exec(koa.get('authorization'))?.[1];
    if (key) return new Access(await this.principalOfKey(koa, key));
    for (const check of this.checks) {
      const reference = await check.verify(koa);
      if (reference === undefined) continue;
      if (reference.kind === 'account') {
        await this.refuseDisabledAccountKey();
        return Access.owner;
      }
      const user = await this.organization?.store.user(reference.id);
      if (!user || user.status !== 'active') throw errors.authentication('Your user is suspended or no longer exists; sign in again.', { code: 'user_suspended' });
      return new Access({ kind: 'user', user });
    }
    throw errors.authentication('The admin API needs an admin credential: the account API key, a personal access token or a service account token in x-gateway-api-key or Authorization: Bearer.', { code: 'invalid_api_key' });
  }

  private async principalOfKey(koa: Context, key: string): Promise<Principal> {
    if (this.accountKey.matches(key)) {
      await this.refuseDisabledAccountKey();
      return { kind: 'account' };
    }
    if (this.organization?.isScimToken?.(key)) return { kind: 'scim' };
    if (key.startsWith(TOKEN_PREFIX) && this.organization) {
      const { store } = this.organization;
      const token = await store.tokenByValue(key);
      if (token) {
        if (token.expires_at !== undefined && Date.parse(token.expires_at) <= Date.now()) {
          throw errors.authentication('This token has expired; create a new one.', { code: 'token_expired' });
        }
        if (token.owner.type === 'user') {
          const user = await store.user(token.owner.id);
          if (!user || user.status !== 'active') throw errors.authentication("This token's user is suspended or no longer exists.", { code: 'user_suspended' });
          if (await store.touchToken(token)) koa.state.tokenUse = token.id;
          return { kind: 'user', user, token };
        }
        const account = await store.serviceAccount(token.owner.id);
        if (account) {
          if (await store.touchToken(token)) koa.state.tokenUse = token.id;
          return { kind: 'service-account', account, token };
        }
      }
    } else {
      for (const isKnownKey of this.otherKeys) {
        if (await isKnownKey(key)) {
          throw errors.permission('The admin API needs an admin credential (the account API key or an admin token); this key may not use it.', { code: 'admin_forbidden' });
        }
      }
    }
    throw refusedKey(koa, errors.authentication('That admin credential is not valid: send the account API key, a personal access token or a service account token.', { code: 'invalid_api_key' }), this.throttle);
  }

  private async refuseDisabledAccountKey(): Promise<void> {
    if (await this.organization?.accountKeyDisabled()) {
      throw errors.authentication('The account key is disabled for the admin API and the dashboard (auth.accountKey: "disabled"); sign in as a user. Recovery: llm-gateway org recover on the host.', { code: 'account_key_disabled' });
    }
  }

  private async audit(koa: Context, access: Access | undefined, outcome: AuditInput['outcome']): Promise<void> {
    if (!this.auditSink) return;
    const note = (koa.state.audit as AuditNote | undefined) ?? {};
    const template = (koa as unknown as { _matchedRoute?: string })._matchedRoute ?? koa.path;
    const { action, type } = actionOf(koa.method, template);
    const id = koa.params?.id ?? koa.params?.alias;
    const team = access?.touchedTeam;
    const named = note.target ?? (id !== undefined ? { type, id } : undefined);
    // The target's team, when it has one: a team's admins read the events of their team's objects.
    const target = named && typeof team === 'string' ? { ...named, team } : named;
    await this.auditSink.record({
      // An unauthenticated attempt (a wrong or refused credential) is recorded as such.
      actor: access?.actor ?? { type: 'system', label: 'unauthenticated caller' },
      action,
      ...(target ? { target } : {}),
      ...(note.changes ? { changes: note.changes } : {}),
      outcome,
      ...requestOrigin(koa, this.throttle.trustProxy ?? 0),
    });
  }
}

/** Route words that name an action rather than a thing (`POST /admin/virtual-keys/:id/rotate` is `virtual-keys.rotate`). */
const ACTION_WORDS = new Set(['rotate', 'approve', 'verify', 'invitation']);
const VERBS: Readonly<Record<string, string>> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

/**
 * An admin call's audit action, dotted and noun first, from its method and route: `POST
 * /admin/virtual-keys` is `virtual-keys.create`, `DELETE /admin/teams/:id/members/:user` is
 * `teams.members.delete`, `PATCH /scim/v2/Users/:id` is `scim.users.update`; `type` is the first
 * noun (the target's kind).
 */
export function actionOf(method: string, template: string): { action: string; type: string } {
  const words = template
    .split('/')
    .filter((segment) => segment !== '' && !segment.startsWith(':') && segment !== 'admin' && segment !== 'v2')
    .map((segment) => segment.toLowerCase());
  const last = words.at(-1);
  const action = last !== undefined && ACTION_WORDS.has(last) && words.length > 1 ? words.join('.') : [...words, VERBS[method] ?? method.toLowerCase()].join('.');
  return { action, type: words[0] === 'scim' ? (words[1] ?? 'scim') : (words[0] ?? 'admin') };
}

/** A wrong key's refusal: `refusal` (401), or 429 once this client address, or all, failed too often. */
export function refusedKey(koa: Context, refusal: GatewayError, throttle: { failedAuth?: FailedAuthLimiter; trustProxy?: number }): GatewayError {
  return throttle.failedAuth?.failure(clientAddress(koa.req, throttle.trustProxy ?? 0), refusal) ?? refusal;
}
