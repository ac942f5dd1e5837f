import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AccountKey } from '../identity/account-key.js';
import { type AdminGuard, refusedKey } from '../admin/guard.js';
import { jsonBody, requestJson } from '../admin/json-body.js';
import type { FailedAuthLimiter } from '../identity/failed-auth.js';
import type { Clock } from '../spec/manifest.js';
import { errors } from '../errors.js';
import { DashboardSessions, type SessionRecords } from './sessions.js';
import { loadAssets, type StaticAsset } from './static.js';
import type { OrganizationStore } from '../org/store.js';

export const SESSION_COOKIE = 'gateway_session';
export const CSRF_HEADER = 'x-gateway-csrf';
/** Read-only admin routes the page opens as a link or an EventSource, which take the CSRF token in `?csrf=`. */
const TOKEN_IN_QUERY = new Set(['/admin/logs/export', '/admin/logs/tail', '/admin/audit/export']);

/** Tight by design: the page loads only its own scripts and styles and talks only to this origin. */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

export interface DashboardOptions {
  readonly adminGuard: AdminGuard;
  readonly accountKey: AccountKey;
  /** Session lifetime (default 8 hours). */
  readonly sessionTtlMs?: number;
  /** Counts wrong keys at sign-in per client address (429 past the limit). */
  readonly failedAuth?: FailedAuthLimiter;
  /** Proxy hops trusted in X-Forwarded-For. */
  readonly trustProxy?: number;
  /** Tells session expiry (default: the system clock). */
  readonly clock?: Clock;
  /** The shared store sessions live in once it is open (see {@link DashboardSessions}). */
  readonly records?: () => SessionRecords | undefined;
  /** Users and invitations: an invitation link signs its user in. */
  readonly organization?: OrganizationStore;
  /** True when the account key may not sign in (`auth.accountKey: "disabled"` and an owner user exists). */
  readonly accountKeyDisabled?: () => Promise<boolean>;
}

/**
 * Mounts the dashboard on the app's router: the page and its assets under `/dashboard`, and the
 * session routes that exchange the account key for an HttpOnly, SameSite=Strict cookie. The cookie
 * (with the CSRF header) is registered with the admin guard, so the page calls the admin API with it.
 */
export function mountDashboard(router: Router, options: DashboardOptions): DashboardSessions {
  const clock = options.clock;
  const sessions = new DashboardSessions(options.sessionTtlMs, undefined, clock ? () => clock.now() : undefined, options.records);
  const assets = loadAssets();
  const index = assets.get('index.html');
  if (!index) throw new Error('The dashboard has no index.html.');

  options.adminGuard.accept({
    async verify(koa) {
      const session = await sessions.get(koa.cookies.get(SESSION_COOKIE));
      if (session === undefined) return undefined;
      // A download link and an EventSource cannot send a header: on these read-only GET routes the
      // token may come in the `csrf` query parameter instead (still with the SameSite=Strict cookie).
      const queryToken = koa.method === 'GET' && TOKEN_IN_QUERY.has(koa.path) && typeof koa.query.csrf === 'string' ? koa.query.csrf : undefined;
      if (!DashboardSessions.csrfMatches(session, koa.get(CSRF_HEADER) || (queryToken ?? ''))) return undefined;
      return session.principal === undefined ? { kind: 'account' } : { kind: 'user', id: session.principal };
    },
  });

  const send = (koa: Context, asset: StaticAsset) => {
    koa.set(PAGE_HEADERS);
    koa.type = asset.contentType;
    koa.body = asset.body;
  };
  router.get('/dashboard', (koa) => send(koa, index));
  router.get('/dashboard/', (koa) => send(koa, index));
  router.get('/dashboard/assets/:name', (koa) => {
    const asset = koa.params.name === 'index.html' ? undefined : assets.get(koa.params.name);
    if (!asset) throw errors.notFound(`No dashboard asset named ${koa.params.name}.`, { code: 'route_not_found' });
    send(koa, asset);
  });

  router.get('/dashboard/session', async (koa) => {
    // 200 either way: the page asks this on every load, and a 401 would be noise in the console.
    const session = await sessions.get(koa.cookies.get(SESSION_COOKIE));
    koa.set('cache-control', 'no-store');
    koa.body = session ? sessionBody(session) : { signed_in: false };
  });

  const signInBody = jsonBody(SIGN_IN_BODY_LIMIT);
  router.post('/dashboard/session', requireJsonContentType, signInBody, async (koa) => {
    const apiKey = requestJson(koa).api_key;
    if (typeof apiKey !== 'string' || apiKey === '') {
      throw errors.invalidRequest('api_key must be the account API key, as a non-empty string.', { param: 'api_key', code: 'missing_api_key' });
    }
    if (!options.accountKey.matches(apiKey)) {
      throw refusedKey(koa, errors.authentication('That is not the account API key.', { code: 'invalid_api_key' }), options);
    }
    if (await options.accountKeyDisabled?.()) {
      throw errors.authentication('The account key is disabled for the dashboard (auth.accountKey: "disabled"): sign in with single sign-on or an invitation link.', { code: 'account_key_disabled' });
    }
    await sessions.delete(koa.cookies.get(SESSION_COOKIE));
    const { id, session } = await sessions.create();
    koa.cookies.set(SESSION_COOKIE, id, {
      httpOnly: true,
      sameSite: 'strict',
      path: '/',
      secure: koa.secure,
      expires: new Date(session.expiresAt),
      overwrite: true,
    });
    koa.set('cache-control', 'no-store');
    koa.status = 201;
    koa.body = sessionBody(session);
  });

  // An invitation link (shown once to the admin who invited): signs its user in, once.
  router.get('/dashboard/invitations/:token', async (koa) => {
    const store = options.organization;
    const userId = store ? await store.redeemInvitation(koa.params.token ?? '') : undefined;
    const user = userId ? await store!.user(userId) : undefined;
    koa.set('cache-control', 'no-store');
    if (!user || user.status === 'suspended') {
      koa.status = 410;
      koa.type = 'text/plain';
      koa.body = 'This invitation link is not valid: it was used already, has expired, or its user was suspended. Ask an administrator for a new one.';
      return;
    }
    if (user.status === 'invited') await store!.updateUser(user.id, { status: 'active' });
    await sessions.delete(koa.cookies.get(SESSION_COOKIE));
    const { id, session } = await sessions.create(user.id);
    koa.cookies.set(SESSION_COOKIE, id, { httpOnly: true, sameSite: 'strict', path: '/', secure: koa.secure, expires: new Date(session.expiresAt), overwrite: true });
    koa.redirect('/dashboard');
  });

  router.delete('/dashboard/session', async (koa) => {
    // Ending a live session takes its CSRF token, so another site cannot sign the user out.
    const session = await sessions.get(koa.cookies.get(SESSION_COOKIE));
    if (session !== undefined && !DashboardSessions.csrfMatches(session, koa.get(CSRF_HEADER))) {
      throw errors.permission(`Signing out needs the session's CSRF token in ${CSRF_HEADER}.`, { code: 'csrf_token_invalid' });
    }
    await sessions.delete(koa.cookies.get(SESSION_COOKIE));
    koa.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/', secure: koa.secure, expires: new Date(0), overwrite: true });
    koa.status = 204;
  });

  return sessions;
}

/** A sign-in body holds one key. */
const SIGN_IN_BODY_LIMIT = 4096;

/** A form post (which a cross-site page can send without a preflight) is refused before it is read. */
async function requireJsonContentType(koa: Context, next: () => Promise<unknown>): Promise<void> {
  if (!koa.is('application/json')) {
    throw errors.invalidRequest('Sign in with a JSON body ({"api_key": "..."}) sent as content-type application/json.', { code: 'unsupported_content_type' });
  }
  await next();
}

const sessionBody = (session: { expiresAt: number; csrfToken: string; principal?: string }) => ({
  signed_in: true,
  ...(session.principal !== undefined ? { user_id: session.principal } : {}),
  expires_at: new Date(session.expiresAt).toISOString(),
  csrf_token: session.csrfToken,
});
