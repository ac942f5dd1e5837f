import type Router from '@koa/router';
import type { Context } from 'koa';
import { type OidcSignIn, refuseEveryone, type SignInHandler, SignInRefused } from '../identity/oidc.js';

/** What the dashboard's single sign-on routes need. */
export interface SingleSignOnOptions {
  readonly oidc: OidcSignIn;
  /** Decides who a verified identity is (default: refuses everyone, so nothing is granted until users are wired). */
  readonly signIn?: SignInHandler;
  /** `GATEWAY_PUBLIC_URL`; absent: the origin each request came to. */
  readonly publicUrl?: string;
  /** Where sign-ins (info) and refusals (warn, with their reason) are reported; never a token. */
  readonly logger?: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
}

/** The cookie that binds a sign-in in progress to the browser that started it. */
export const FLOW_COOKIE = 'gateway_sso_flow';
const CALLBACK_PATH = '/dashboard/auth/callback';

/** The answer pages: nothing to run, nothing to load but the dashboard's stylesheet. */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!);

/** A small HTML page with a title, a sentence and a way back. */
function page(koa: Context, status: number, title: string, sentence: string, links: { href: string; text: string }[] = [{ href: '/dashboard', text: 'Back to sign-in' }]): void {
  koa.set(PAGE_HEADERS);
  koa.status = status;
  koa.type = 'text/html; charset=utf-8';
  const items = links.map((link) => `<li><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></li>`).join('');
  koa.body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
    `<link rel="stylesheet" href="/dashboard/assets/app.css"></head><body><main class="sign-in">` +
    `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(sentence)}</p><ul>${items}</ul></main></body></html>`;
}

/**
 * Mounts `GET /dashboard/auth/login` (`?provider=<id>` when several are configured), which sends the
 * browser to the identity provider, and `GET /dashboard/auth/callback`, which finishes the sign-in:
 * a verified identity the sign-in handler accepts gets a dashboard session bound to its principal;
 * anything that does not verify is a 401 page, a refusal by the handler (or an unverified email) a 403
 * "no access" page. `startSession` ends the browser's previous session and sets the new one's cookie,
 * as the account-key sign-in does.
 */
export function mountSingleSignOn(
  router: Router,
  startSession: (koa: Context, principal: string) => Promise<void>,
  options: SingleSignOnOptions,
): void {
  const { oidc, signIn = refuseEveryone } = options;
  const warn = (fields: object, message: string) => options.logger?.warn(fields, message);

  router.get('/dashboard/auth/login', async (koa) => {
    const requested = typeof koa.query.provider === 'string' ? koa.query.provider : undefined;
    if (requested === undefined && oidc.providers.length > 1) {
      const links = oidc.providers.map(({ id, name }) => ({ href: `/dashboard/auth/login?provider=${encodeURIComponent(id)}`, text: `Sign in with ${name}` }));
      return page(koa, 200, 'Choose how to sign in', 'Several identity providers are configured.', links);
    }
    const redirectUri = `${options.publicUrl ?? `${koa.protocol}://${koa.host}`}${CALLBACK_PATH}`;
    let started: { flowId: string; location: string };
    try {
      started = await oidc.begin(requested, redirectUri);
    } catch (error) {
      if (!(error instanceof SignInRefused)) throw error;
      warn({ provider: requested, reason: error.message }, 'single sign-on could not start');
      return page(koa, requested !== undefined && !oidc.providers.some(({ id }) => id === requested) ? 404 : 502, 'Sign-in could not start', error.message);
    }
    // Lax, not Strict: the provider's redirect back is a cross-site navigation, and it must carry the cookie.
    koa.cookies.set(FLOW_COOKIE, started.flowId, { httpOnly: true, sameSite: 'lax', path: '/dashboard/auth', secure: koa.secure, maxAge: 10 * 60_000, overwrite: true });
    koa.set('cache-control', 'no-store');
    koa.redirect(started.location);
  });

  router.get(CALLBACK_PATH, async (koa) => {
    const flowId = koa.cookies.get(FLOW_COOKIE);
    koa.cookies.set(FLOW_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/dashboard/auth', secure: koa.secure, expires: new Date(0), overwrite: true });
    const providerError = typeof koa.query.error === 'string' && /^[a-z_]{1,64}$/.test(koa.query.error) ? koa.query.error : undefined;
    if (providerError !== undefined) {
      await oidc.discard(flowId);
      return page(koa, 401, 'Sign-in failed', `The identity provider ended the sign-in (${providerError}).`);
    }
    let identity;
    try {
      identity = await oidc.finish(flowId, koa.querystring);
    } catch (error) {
      if (!(error instanceof SignInRefused)) throw error;
      warn({ reason: error.message }, 'single sign-on refused');
      return page(koa, 401, 'Sign-in failed', error.message);
    }
    if (!identity.emailVerified) {
      warn({ provider: identity.provider, subject: identity.subject }, 'single sign-on without a verified email');
      return page(koa, 403, 'No access', 'Your identity provider did not confirm your email address, so this gateway cannot tell who you are.');
    }
    const decision = await signIn(identity);
    if ('refused' in decision) {
      warn({ provider: identity.provider, subject: identity.subject }, 'single sign-on refused by the user directory');
      return page(koa, 403, 'No access', decision.refused);
    }
    await startSession(koa, decision.principal);
    options.logger?.info({ provider: identity.provider, subject: identity.subject, principal: decision.principal }, 'single sign-on');
    koa.set('cache-control', 'no-store');
    koa.status = 303;
    koa.redirect('/dashboard');
  });
}
