import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { Page } from 'playwright-core';
import { resolveConfig } from '../../config/index.js';
import type { SignInIdentity } from '../../core/identity/oidc.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { browserSkipReason, type BrowserSession, openBrowser } from '../browser/browser.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';
import { CLIENT_ID, CLIENT_SECRET, claimsOf, type ProviderKey, providerKey, resigned, startProvider, type TestProvider } from './oidc-provider.js';

// Dashboard single sign-on against a real OpenID provider on loopback, driven in Chromium: the whole
// authorization code flow (PKCE, state, nonce) ends signed in with the handler's principal; every
// forged or replayed answer ends on a 401 page that shows no token.

const skip = browserSkipReason();
let provider: TestProvider;
let gateway: TestGateway;
/** A gateway with no sign-in handler (the default refuses everyone), configured by environment alone, with a second provider. */
let bare: TestGateway;
let browser: BrowserSession;
/** Two instances sharing Redis (when it is reachable): the first starts sign-ins, the second finishes them. */
let shared: TestGateway[] = [];
const redisPrefix = `sso-test-${process.pid}-${Date.now()}`;
let first: ProviderKey;
let second: ProviderKey;
let now = Date.now();
const identities: SignInIdentity[] = [];

test.before(async () => {
  if (skip) return;
  [first, second] = await Promise.all([providerKey('sig-1'), providerKey('sig-2')]);
  const gateways: TestGateway[] = [];
  provider = await startProvider(() => gateways.map((one) => `${one.url}/dashboard/auth/callback`));
  provider.useKeys([first]);
  // A handler of the test's own (the embedder's seam): it records what it is asked, and admits the
  // group llm-admins as admin users of the gateway that asks (the organization's own handler is
  // tested on the bare gateway below).
  const signInFor = (url: () => string) => async (identity: SignInIdentity) => {
    identities.push(identity);
    if (!identity.groups.includes('llm-admins')) return { refused: 'You are not in a group this gateway admits.' };
    return { principal: await adminUser(url(), identity.email) };
  };
  const sso = [{ id: 'test-idp', name: 'Test IdP', issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: ['openid', 'email', 'profile', 'groups'] }];
  gateway = await startGateway({ auth: { sso } }, {}, { clock: { now: () => now }, identity: { signIn: signInFor(() => gateway.url) } });
  bare = await startGateway(
    { auth: { sso: [{ id: 'other', issuer: 'https://idp.invalid', clientId: 'x', clientSecret: 'y' }] } },
    { GATEWAY_OIDC_ISSUER: provider.issuer, GATEWAY_OIDC_CLIENT_ID: CLIENT_ID, GATEWAY_OIDC_CLIENT_SECRET: CLIENT_SECRET },
  );
  gateways.push(gateway, bare);
  if (await redisAvailable()) {
    // Two instances sharing Redis: the one that starts a sign-in sends the provider back to the other.
    const environment = { REDIS_URL, GATEWAY_REDIS_PREFIX: redisPrefix, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') };
    const finishing: TestGateway = await startGateway({ auth: { sso } }, environment, { identity: { signIn: signInFor(() => finishing.url) } });
    const starting = await startGateway({ auth: { sso } }, { ...environment, GATEWAY_PUBLIC_URL: finishing.url }, { identity: { signIn: signInFor(() => finishing.url) } });
    shared = [starting, finishing];
    gateways.push(finishing);
  }
  provider.useKeys([first]);
  browser = await openBrowser();
  // Nothing leaves loopback (the provider's log-in page links a web font).
  await browser.context.route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());
});

test.after.always(async () => {
  for (const instance of shared) await instance.close();
  if (shared.length > 0) await clearRedisPrefix(redisPrefix);
  await browser?.close();
  await gateway?.close();
  await bare?.close();
  await provider?.close();
});

/** The id of the admin user with this email on a gateway, created (through the admin API) when none has it. */
async function adminUser(url: string, email: string): Promise<string> {
  const headers = { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' };
  const users = (await (await fetch(`${url}/admin/users`, { headers })).json()) as { data: Array<{ id: string; email: string }> };
  const found = users.data.find((user) => user.email === email);
  if (found) return found.id;
  const created = (await (await fetch(`${url}/admin/users`, { method: 'POST', headers, body: JSON.stringify({ email, role: 'admin' }) })).json()) as { id: string };
  // Invited users become active when they first sign in; this handler signs them in itself.
  await fetch(`${url}/admin/users/${created.id}`, { method: 'PATCH', headers, body: JSON.stringify({ status: 'active' }) });
  return created.id;
}

/** Starts at the gateway's login route and goes through the provider's pages until the browser is back at the gateway's callback. */
async function signInThroughProvider(page: Page, gatewayUrl: string, login: string, start = '/dashboard/auth/login', returnsTo = gatewayUrl): Promise<{ status: number; text: string }> {
  const callback = page.waitForResponse((response) => response.url().startsWith(`${returnsTo}/dashboard/auth/callback`), { timeout: 20_000 });
  await page.goto(`${gatewayUrl}${start}`);
  if (start === '/dashboard') await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await page.waitForURL((url) => url.origin === provider.issuer || url.pathname.startsWith('/dashboard/auth/callback'));
  for (let step = 0; step < 4 && page.url().startsWith(provider.issuer); step++) {
    const loginField = page.locator('input[name=login]');
    if (await loginField.isVisible()) {
      await loginField.fill(login);
      await page.locator('input[name=password]').fill('any password');
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign-in' }).click()]);
    } else if (await page.getByRole('button', { name: 'Continue' }).isVisible()) {
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Continue' }).click()]);
    } else {
      break;
    }
  }
  const response = await callback;
  await page.waitForLoadState();
  return { status: response.status(), text: await page.locator('body').innerText() };
}

/** The dashboard session of the browser's cookies (the answer pages' CSP forbids a fetch from them). */
async function sessionOf(page: Page, gatewayUrl: string): Promise<{ signed_in: boolean; principal?: string }> {
  const cookies = await page.context().cookies(gatewayUrl);
  const cookie = cookies.map(({ name, value }) => `${name}=${value}`).join('; ');
  return (await fetch(`${gatewayUrl}/dashboard/session`, { headers: { cookie } })).json() as Promise<{ signed_in: boolean; principal?: string }>;
}

async function signOut(page: Page, gatewayUrl: string): Promise<void> {
  await page.context().clearCookies({ domain: '127.0.0.1', name: 'gateway_session' });
  await page.goto(`${gatewayUrl}/dashboard`);
}

/** The page shows no token the provider issued, nor the code. */
function assertNoTokenShown(t: import('ava').ExecutionContext, text: string): void {
  t.true(provider.issued.length > 0);
  for (const token of provider.issued) t.false(text.includes(token), 'a token is shown');
  t.notRegex(text, /eyJ[A-Za-z0-9_-]{10,}/);
}

test.serial('signed out, the dashboard offers the configured provider', async (t) => {
  if (skip) return t.pass(skip);
  const response = await fetch(`${gateway.url}/dashboard/session`);
  t.like(await response.json(), { signed_in: false, sso_providers: [{ id: 'test-idp', name: 'Test IdP' }] });
});

test.serial('the whole sign-in in Chromium ends on the dashboard, signed in as the principal the handler named', async (t) => {
  if (skip) return t.pass(skip);
  const { page } = browser;
  // From the dashboard's sign-in page, whose link starts the single sign-on.
  const result = await signInThroughProvider(page, gateway.url, 'ada-admin', '/dashboard');
  t.is(result.status, 303);
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();
  t.is(new URL(page.url()).pathname, '/dashboard');
  const ada = await adminUser(gateway.url, 'ada-admin@example.com');
  t.like(await sessionOf(page, gateway.url), { signed_in: true, principal: ada });
  t.like(identities.at(-1), { provider: 'test-idp', issuer: provider.issuer, subject: 'ada-admin', email: 'ada-admin@example.com', emailVerified: true, name: 'Person ada-admin' });
  t.deepEqual(identities.at(-1)!.groups, ['llm-admins', 'everyone']);
  // The flow's cookie is used up, and the admin API answers the SSO session (with its CSRF token).
  t.false((await page.context().cookies()).some((cookie) => cookie.name === 'gateway_sso_flow' && cookie.value !== ''));
  const status = await page.evaluate(async (url) => {
    const session = await (await fetch(`${url}/dashboard/session`)).json();
    return (await fetch(`${url}/admin/virtual-keys`, { headers: { "x-gateway-csrf": (session as { csrf_token: string }).csrf_token } })).status;
  }, gateway.url);
  t.is(status, 200);
  for (const token of provider.issued) t.false(gateway.rawLog().includes(token), 'no token in the log');
  t.like(gateway.lines.findLast((line) => line.msg === 'single sign-on'), { provider: 'test-idp', subject: 'ada-admin', principal: ada });
});

test.serial('a person the handler refuses gets a "no access" page and no session', async (t) => {
  if (skip) return t.pass(skip);
  const { page } = browser;
  await signOut(page, gateway.url);
  await page.context().clearCookies();
  const result = await signInThroughProvider(page, gateway.url, 'bob');
  t.is(result.status, 403);
  t.regex(result.text, /No access/);
  t.regex(result.text, /not in a group this gateway admits/);
  t.like(await sessionOf(page, gateway.url), { signed_in: false });
});

test.serial('an unverified email is refused before the handler is asked', async (t) => {
  if (skip) return t.pass(skip);
  const { page } = browser;
  await page.context().clearCookies();
  const asked = identities.length;
  const result = await signInThroughProvider(page, gateway.url, 'eve-admin-unverified');
  t.is(result.status, 403);
  t.regex(result.text, /did not confirm your email/);
  t.is(identities.length, asked);
});

test.serial("Entra ID's xms_edov stands for email_verified when the token has none", async (t) => {
  if (skip) return t.pass(skip);
  const { page } = browser;
  await page.context().clearCookies();
  const result = await signInThroughProvider(page, gateway.url, 'kim-admin-entra');
  t.is(result.status, 303);
  t.like(identities.at(-1), { subject: 'kim-admin-entra', emailVerified: true });
  t.is(identities.at(-1)!.claims.email_verified, undefined);
});

const forgeries: Array<[string, () => import('./oidc-provider.js').Tamper, RegExp]> = [
  ['a tampered ID token (claims changed, signature kept)', () => async (answer) => {
    const [header, , signature] = answer.id_token!.split('.');
    const claims = { ...claimsOf(answer.id_token!), groups: ['llm-admins'], sub: 'someone-else' };
    return { ...answer, id_token: `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}` };
  }, /signature did not verify/],
  ['an ID token for another audience', () => resigned(first, (claims) => ({ ...claims, aud: 'another-client' })), /did not verify.*aud/],
  ['an ID token with another nonce', () => resigned(first, (claims) => ({ ...claims, nonce: 'not-the-one-sent' })), /did not verify.*nonce/],
  ['an expired ID token', () => resigned(first, (claims) => ({ ...claims, iat: claims.iat! - 7200, exp: claims.iat! - 3600 })), /did not verify.*exp/],
  ['an unsigned ID token (alg: none)', () => async (answer) => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    return { ...answer, id_token: `${header}.${answer.id_token!.split('.')[1]}.` };
  }, /did not verify.*alg/],
];
for (const [name, forge, reason] of forgeries) {
  test.serial(`refused with a 401 page that shows no token: ${name}`, async (t) => {
    if (skip) return t.pass(skip);
    const { page } = browser;
    await page.context().clearCookies();
    const asked = identities.length;
    provider.tamper = forge();
    try {
      const result = await signInThroughProvider(page, gateway.url, 'ada-admin');
      t.is(result.status, 401);
      t.regex(result.text, /Sign-in failed/);
      t.regex(result.text, reason);
      assertNoTokenShown(t, result.text);
    } finally {
      provider.tamper = undefined;
    }
    t.is(identities.length, asked, 'the handler is never asked');
    t.like(await sessionOf(page, gateway.url), { signed_in: false });
  });
}

test.serial('a callback with another state is refused, and the flow cannot be finished afterwards', async (t) => {
  if (skip) return t.pass(skip);
  // The sign-in starts as a browser's would; the provider's answer comes back with a forged state.
  const login = await fetch(`${gateway.url}/dashboard/auth/login`, { redirect: 'manual' });
  t.is(login.status, 302);
  const flowCookie = login.headers.getSetCookie().find((cookie) => cookie.startsWith('gateway_sso_flow='))!;
  t.regex(flowCookie, /httponly/i);
  t.regex(flowCookie, /samesite=lax/i);
  const authorization = new URL(login.headers.get('location')!);
  t.is(authorization.origin, provider.issuer);
  t.is(authorization.searchParams.get('code_challenge_method'), 'S256');
  t.truthy(authorization.searchParams.get('nonce'));
  const state = authorization.searchParams.get('state')!;
  const cookie = flowCookie.split(';')[0];
  const callback = (parameters: Record<string, string>) =>
    fetch(`${gateway.url}/dashboard/auth/callback?${new URLSearchParams({ code: 'a-code', iss: provider.issuer, ...parameters })}`, { headers: { cookie }, redirect: 'manual' });
  const forged = await callback({ state: 'forged-state' });
  t.is(forged.status, 401);
  t.regex(await forged.text(), /Sign-in failed.*state/s);
  // With the right state now, the flow is used up: a callback cannot be replayed.
  const replay = await callback({ state });
  t.is(replay.status, 401);
  t.regex(await replay.text(), /expired or was started in another browser/);
});

test.serial("the provider's error ends the sign-in with a 401 page naming it", async (t) => {
  if (skip) return t.pass(skip);
  const login = await fetch(`${gateway.url}/dashboard/auth/login`, { redirect: 'manual' });
  const cookie = login.headers.getSetCookie().find((value) => value.startsWith('gateway_sso_flow='))!.split(';')[0];
  const state = new URL(login.headers.get('location')!).searchParams.get('state')!;
  const denied = await fetch(`${gateway.url}/dashboard/auth/callback?error=access_denied&state=${state}`, { headers: { cookie } });
  t.is(denied.status, 401);
  t.regex(await denied.text(), /ended the sign-in \(access_denied\)/);
  const after = await fetch(`${gateway.url}/dashboard/auth/callback?code=x&state=${state}`, { headers: { cookie } });
  t.regex(await after.text(), /expired or was started in another browser/);
});

test.serial('a callback in a browser that did not start the sign-in is refused', async (t) => {
  if (skip) return t.pass(skip);
  const response = await fetch(`${gateway.url}/dashboard/auth/callback?code=abc&state=def`, { redirect: 'manual' });
  t.is(response.status, 401);
  t.regex(await response.text(), /expired or was started in another browser/);
});

test.serial('after the provider rotates its signing key, sign-in works; a token signed by the retired key is refused', async (t) => {
  if (skip) return t.pass(skip);
  const { page } = browser;
  provider.useKeys([second]);
  // Past the key set's refresh cooldown: the unknown kid makes the gateway fetch the new set.
  now += 60_000;
  await page.context().clearCookies();
  const rotated = await signInThroughProvider(page, gateway.url, 'ada-admin');
  t.is(rotated.status, 303);
  const idToken = provider.issued.filter((token) => token.startsWith('eyJ')).at(-1)!;
  t.is(JSON.parse(Buffer.from(idToken.split('.')[0], 'base64url').toString('utf8')).kid, 'sig-2', 'signed with the new key');
  t.like(await sessionOf(page, gateway.url), { signed_in: true, principal: await adminUser(gateway.url, 'ada-admin@example.com') });

  await page.context().clearCookies();
  provider.tamper = resigned(first, (claims) => claims);
  try {
    const retired = await signInThroughProvider(page, gateway.url, 'ada-admin');
    t.is(retired.status, 401);
    t.regex(retired.text, /signature did not verify/);
    assertNoTokenShown(t, retired.text);
  } finally {
    provider.tamper = undefined;
  }
});

test.serial("the organization's own handler: an unknown email has no access; an invited user is matched by verified email; several providers offer a choice", async (t) => {
  if (skip) return t.pass(skip);
  const { page } = browser;
  await page.context().clearCookies();
  const choice = await fetch(`${bare.url}/dashboard/auth/login`);
  t.is(choice.status, 200);
  const html = await choice.text();
  t.regex(html, /provider=oidc/);
  t.regex(html, /provider=other/);
  t.is((await fetch(`${bare.url}/dashboard/auth/login?provider=nope`, { redirect: 'manual' })).status, 404);
  const result = await signInThroughProvider(page, bare.url, 'ada-admin', '/dashboard/auth/login?provider=oidc');
  t.is(result.status, 403);
  t.regex(result.text, /no access to this gateway yet/);
  t.like(await sessionOf(page, bare.url), { signed_in: false });
  // Invited by an admin: the sign-in finds the user by the ID token's verified email and activates it.
  const invited = await fetch(`${bare.url}/admin/users`, { method: 'POST', headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ada-admin@example.com', role: 'auditor' }) });
  const user = (await invited.json()) as { id: string; status: string };
  t.is(user.status, 'invited');
  await page.context().clearCookies();
  const admitted = await signInThroughProvider(page, bare.url, 'ada-admin', '/dashboard/auth/login?provider=oidc');
  t.is(admitted.status, 303);
  t.like(await sessionOf(page, bare.url), { signed_in: true, principal: user.id });
  const me = await page.evaluate(async (url) => {
    const session = (await (await fetch(`${url}/dashboard/session`)).json()) as { csrf_token: string };
    return (await fetch(`${url}/admin/me`, { headers: { 'x-gateway-csrf': session.csrf_token } })).json();
  }, bare.url);
  t.like(me, { user: { email: 'ada-admin@example.com', role: 'auditor', status: 'active', source: 'invitation' } });
});

test.serial('with Redis, another instance finishes a sign-in one instance started, and the session is known to both', async (t) => {
  if (skip) return t.pass(skip);
  if (shared.length === 0) return t.pass('Redis is not reachable');
  const [starting, finishing] = shared;
  const { page } = browser;
  await page.context().clearCookies();
  const result = await signInThroughProvider(page, starting.url, 'ada-admin', '/dashboard/auth/login', finishing.url);
  t.is(result.status, 303);
  const ada = await adminUser(finishing.url, 'ada-admin@example.com');
  t.like(await sessionOf(page, finishing.url), { signed_in: true, principal: ada });
  t.like(await sessionOf(page, starting.url), { signed_in: true, principal: ada });
});

test('GATEWAY_OIDC_* configure one provider; GATEWAY_PUBLIC_URL sets the redirect base', (t) => {
  const config = resolveConfig(
    { providers: [openai()] },
    { GATEWAY_OIDC_ISSUER: 'https://idp.example.com', GATEWAY_OIDC_CLIENT_ID: 'id', GATEWAY_OIDC_CLIENT_SECRET: 'secret', GATEWAY_PUBLIC_URL: 'https://llm.example.com/' },
  );
  t.deepEqual(config.auth.sso, [{ id: 'oidc', name: 'oidc', issuer: 'https://idp.example.com', clientId: 'id', clientSecret: 'secret', groupsClaim: 'groups', scopes: ['openid', 'email', 'profile'] }]);
  t.is(config.auth.publicUrl, 'https://llm.example.com');
  t.throws(() => resolveConfig({ providers: [openai()] }, { GATEWAY_OIDC_ISSUER: 'https://idp.example.com' }), { message: /clientId/ });
  t.throws(() => resolveConfig({ providers: [openai()], auth: { sso: [{ id: 'a', issuer: 'http://idp.example.com', clientId: 'x', clientSecret: 'y' }] } }), { message: /https/ });
});
