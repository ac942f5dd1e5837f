import test from 'ava';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway();
});
test.after.always(() => gateway?.close());

const signIn = (apiKey: unknown) =>
  fetch(`${gateway.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: apiKey }) });

async function session(): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const response = await signIn(ACCOUNT_KEY);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const body = (await response.json()) as { csrf_token: string };
  return { cookie: setCookie.split(';')[0], csrf: body.csrf_token, setCookie };
}

test('the page and its assets are served with a strict content security policy', async (t) => {
  for (const path of ['/dashboard', '/dashboard/']) {
    const response = await fetch(`${gateway.url}${path}`);
    t.is(response.status, 200);
    t.regex(response.headers.get('content-type') ?? '', /^text\/html/);
    t.regex(response.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    t.is(response.headers.get('x-content-type-options'), 'nosniff');
    t.regex(await response.text(), /<script type="module" src="\/dashboard\/assets\/app.js">/);
  }
  const script = await fetch(`${gateway.url}/dashboard/assets/app.js`);
  t.is(script.status, 200);
  t.regex(script.headers.get('content-type') ?? '', /^text\/javascript/);
  const style = await fetch(`${gateway.url}/dashboard/assets/app.css`);
  t.regex(style.headers.get('content-type') ?? '', /^text\/css/);
});

test('only the folder’s own files are served', async (t) => {
  for (const path of ['/dashboard/assets/nope.js', '/dashboard/assets/..%2Fsessions.ts', '/dashboard/assets/..%2F..%2F..%2Fpackage.json']) {
    const response = await fetch(`${gateway.url}${path}`);
    t.is(response.status, 404, path);
    t.is(((await response.json()) as { error: { type: string } }).error.type, 'not_found_error');
  }
});

test('a wrong or missing key gets a clear error and no cookie', async (t) => {
  const wrong = await signIn('gw-not-the-key');
  t.is(wrong.status, 401);
  t.is(wrong.headers.get('set-cookie'), null);
  t.is(((await wrong.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
  const missing = await signIn('');
  t.is(missing.status, 400);
  t.is(((await missing.json()) as { error: { param: string } }).error.param, 'api_key');
  const notJson = await fetch(`${gateway.url}/dashboard/session`, { method: 'POST', body: 'api_key=x' });
  t.is(notJson.status, 400);
});

test('the account key is exchanged for an HttpOnly, SameSite=Strict cookie that is not the key', async (t) => {
  const { cookie, csrf, setCookie } = await session();
  t.regex(setCookie, /^gateway_session=[A-Za-z0-9_-]{43};/);
  t.regex(setCookie, /; path=\//i);
  t.regex(setCookie, /; samesite=strict/i);
  t.regex(setCookie, /; httponly/i);
  t.false(setCookie.includes(ACCOUNT_KEY));
  t.truthy(csrf);
  t.false(cookie.includes(csrf));
  const current = await fetch(`${gateway.url}/dashboard/session`, { headers: { cookie } });
  t.is(current.status, 200);
  const body = await current.text();
  t.false(body.includes(ACCOUNT_KEY));
  t.like(JSON.parse(body), { signed_in: true, csrf_token: csrf });
  const anonymous = await fetch(`${gateway.url}/dashboard/session`);
  t.deepEqual(await anonymous.json(), { signed_in: false });
});

test('the admin API accepts the cookie only together with its CSRF token', async (t) => {
  const { cookie, csrf } = await session();
  t.is((await fetch(`${gateway.url}/admin/plugins`, { headers: { cookie, 'x-gateway-csrf': csrf } })).status, 200);
  t.is((await fetch(`${gateway.url}/admin/plugins`, { headers: { cookie } })).status, 401);
  t.is((await fetch(`${gateway.url}/admin/plugins`, { headers: { cookie, 'x-gateway-csrf': `${csrf}x` } })).status, 401);
  t.is((await fetch(`${gateway.url}/admin/plugins`, { headers: { 'x-gateway-csrf': csrf } })).status, 401);
  const other = await session();
  t.is((await fetch(`${gateway.url}/admin/plugins`, { headers: { cookie, 'x-gateway-csrf': other.csrf } })).status, 401);
});

test('signing out ends the session and clears the cookie', async (t) => {
  const { cookie, csrf } = await session();
  const out = await fetch(`${gateway.url}/dashboard/session`, { method: 'DELETE', headers: { cookie, 'x-gateway-csrf': csrf } });
  t.is(out.status, 204);
  t.regex(out.headers.get('set-cookie') ?? '', /^gateway_session=;.*expires=Thu, 01 Jan 1970/i);
  t.is((await fetch(`${gateway.url}/admin/plugins`, { headers: { cookie, 'x-gateway-csrf': csrf } })).status, 401);
  const after = await fetch(`${gateway.url}/dashboard/session`, { headers: { cookie } });
  t.deepEqual(await after.json(), { signed_in: false });
});

test('signing out without the CSRF token is refused and the session stays', async (t) => {
  const { cookie, csrf } = await session();
  for (const headers of [{ cookie }, { cookie, 'x-gateway-csrf': `${csrf}x` }]) {
    const out = await fetch(`${gateway.url}/dashboard/session`, { method: 'DELETE', headers });
    t.is(out.status, 403);
    t.like(((await out.json()) as { error: object }).error, { type: 'permission_error', code: 'csrf_token_invalid' });
    t.is(out.headers.get('set-cookie'), null);
  }
  t.is((await fetch(`${gateway.url}/admin/plugins`, { headers: { cookie, 'x-gateway-csrf': csrf } })).status, 200, 'still signed in');
});

test('signing in needs a JSON content type: a cross-site text/plain or form post is refused', async (t) => {
  const json = JSON.stringify({ api_key: ACCOUNT_KEY });
  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const response = await fetch(`${gateway.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': contentType }, body: json });
    t.is(response.status, 400, contentType);
    t.is(response.headers.get('set-cookie'), null);
    t.is(((await response.json()) as { error: { code: string } }).error.code, 'unsupported_content_type');
  }
  const charset = await fetch(`${gateway.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: json });
  t.is(charset.status, 201);
});

test('a sign-in body past 4 KB is refused with 413; one that is not a JSON object with 400 invalid_json', async (t) => {
  const post = (body: string) => fetch(`${gateway.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const large = await post(JSON.stringify({ api_key: ACCOUNT_KEY, padding: 'x'.repeat(4096) }));
  t.is(large.status, 413);
  t.like(((await large.json()) as { error: object }).error, { code: 'body_too_large' });
  for (const body of ['{"api_key":', '["x"]']) {
    const refused = await post(body);
    t.is(refused.status, 400, body);
    t.is(refused.headers.get('set-cookie'), null);
    t.like(((await refused.json()) as { error: object }).error, { type: 'invalid_request_error', code: 'invalid_json' });
  }
});
