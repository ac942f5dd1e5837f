/**
 * OAuth 2 client credentials for upstream MCP servers that want them (RFC 6749 §4.4): the gateway
 * asks the server's token endpoint for an access token with its client id and secret, keeps it,
 * asks again before it expires and when the server answers 401, and sends it as the Bearer token.
 */

/** A stored server's `oauth` settings; the client secret is the server's vault `credential`. */
export interface McpOAuthSettings {
  readonly token_url: string;
  readonly client_id: string;
  readonly scope?: string;
  /** Appended to the token request (some providers want `audience` or `resource`). */
  readonly audience?: string;
  /** How the client authenticates to the token endpoint: HTTP Basic (default) or in the form body. */
  readonly token_auth?: 'client_secret_basic' | 'client_secret_post';
}

/** Fails a token request (its message never holds the secret). */
export class OAuthTokenError extends Error {
  override readonly name = 'OAuthTokenError';
}

/** Longest a token is kept before it is asked for again, when the endpoint gives no `expires_in`. */
const DEFAULT_LIFETIME_MS = 5 * 60_000;

/**
 * One server's access token: fetched on first use, reused until shortly before it expires (a
 * minute before, or half its lifetime for a short one), one fetch at a time; dropped when the server
 * refuses it (401), so the next request fetches a new one.
 */
export class OAuthTokenSource {
  private current?: { readonly token: string; readonly refreshAt: number };
  private fetching?: Promise<string>;

  constructor(
    private readonly request: () => Promise<{ readonly token: string; readonly lifetimeMs?: number }>,
    private readonly now: () => number = Date.now,
  ) {}

  /** A valid access token (fetched if there is none, or it is about to expire). */
  token(): Promise<string> {
    const current = this.current;
    if (current !== undefined && this.now() < current.refreshAt) return Promise.resolve(current.token);
    this.fetching ??= this.request()
      .then(({ token, lifetimeMs }) => {
        const lifetime = lifetimeMs ?? DEFAULT_LIFETIME_MS;
        this.current = { token, refreshAt: this.now() + lifetime - Math.min(60_000, lifetime / 2) };
        return token;
      })
      .finally(() => {
        this.fetching = undefined;
      });
    return this.fetching;
  }

  /** The server refused `token`: forget it (unless a newer one replaced it meanwhile). */
  refused(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }
}

/** Asks a token endpoint for a client credentials token. */
export async function requestToken(fetcher: typeof fetch, settings: McpOAuthSettings, secret: string, timeoutMs: number): Promise<{ token: string; lifetimeMs?: number }> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (settings.scope !== undefined) form.set('scope', settings.scope);
  if (settings.audience !== undefined) form.set('audience', settings.audience);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (settings.token_auth === 'client_secret_post') {
    form.set('client_id', settings.client_id);
    form.set('client_secret', secret);
  } else {
    // RFC 6749 §2.3.1: both parts form-encoded before they are joined.
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(settings.client_id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  }
  let response: Response;
  try {
    response = await fetcher(settings.token_url, { method: 'POST', headers, body: form.toString(), signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    throw new OAuthTokenError(`the token endpoint could not be reached (${(error as Error).name})`);
  }
  const text = await response.text();
  if (!response.ok) throw new OAuthTokenError(`the token endpoint answered ${response.status}`);
  let body: { access_token?: unknown; expires_in?: unknown; token_type?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new OAuthTokenError('the token endpoint answered with a body that is not JSON');
  }
  if (typeof body.access_token !== 'string' || body.access_token === '') throw new OAuthTokenError('the token endpoint gave no access_token');
  if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') throw new OAuthTokenError(`the token endpoint gave a ${body.token_type.slice(0, 20)} token, not a Bearer token`);
  const seconds = typeof body.expires_in === 'number' ? body.expires_in : typeof body.expires_in === 'string' ? Number(body.expires_in) : Number.NaN;
  return { token: body.access_token, ...(Number.isFinite(seconds) && seconds > 0 ? { lifetimeMs: seconds * 1000 } : {}) };
}

/** Headers of a fetch's init with the Bearer token set (whatever form they came in). */
function withToken(init: RequestInit | undefined, token: string): RequestInit {
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${token}`);
  return { ...init, headers };
}

/**
 * A fetch that sends the source's token on every request and, when the server answers 401, drops
 * it, fetches a new one and sends the request once more (the SDK's bodies are strings, so they can
 * be sent again).
 */
export function authorizedFetch(base: typeof fetch, tokens: OAuthTokenSource): typeof fetch {
  return async (input, init) => {
    const token = await tokens.token();
    const response = await base(input, withToken(init, token));
    if (response.status !== 401) return response;
    await response.body?.cancel().catch(() => {});
    tokens.refused(token);
    return base(input, withToken(init, await tokens.token()));
  };
}
