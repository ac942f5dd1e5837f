// Talks to the admin API with the session cookie (sent by the browser, HttpOnly) and the CSRF
// token, which lives only in this module's memory. The account key is never kept.

let csrfToken = '';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `Request failed with status ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function call(method, path, { query, body } = {}) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, value);
  const headers = { accept: 'application/json' };
  if (csrfToken) headers['x-gateway-csrf'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  const text = await response.text();
  const parsed = text ? safeJson(text) : null;
  if (response.status === 401 && !path.startsWith('/dashboard/session')) window.dispatchEvent(new Event('gateway-signed-out'));
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export const api = {
  get: (path, query) => call('GET', path, { query }),
  post: (path, body) => call('POST', path, { body: body ?? {} }),
  patch: (path, body) => call('PATCH', path, { body }),
  put: (path, body) => call('PUT', path, { body }),
  delete: (path) => call('DELETE', path),
};

/**
 * The address of a read-only admin route the page opens as a link (a download) or an EventSource,
 * which cannot send the CSRF header: the token goes in `?csrf=` (the server takes it there on those
 * routes only, with the session cookie). `token: false` leaves it out (an address to show).
 */
export function linkUrl(path, query, { token = true } = {}) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, value);
  if (token && csrfToken) url.searchParams.set('csrf', csrfToken);
  return `${url.pathname}${url.search}`;
}

/** The single sign-on providers the gateway offers (`[{ id, name }]`), known once signed out. */
export let ssoProviders = [];

/** The current session, or null when signed out. */
export async function currentSession() {
  const session = await call('GET', '/dashboard/session');
  if (!session?.signed_in) {
    ssoProviders = Array.isArray(session?.sso_providers) ? session.sso_providers : [];
    return null;
  }
  csrfToken = session.csrf_token;
  return session;
}

export async function signIn(apiKey) {
  const session = await call('POST', '/dashboard/session', { body: { api_key: apiKey } });
  csrfToken = session.csrf_token;
  return session;
}

export async function signOut() {
  await call('DELETE', '/dashboard/session');
  csrfToken = '';
}
