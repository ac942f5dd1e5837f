import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK, type JWTPayload, SignJWT } from 'jose';
import Provider from 'oidc-provider';

// A real OpenID provider on loopback (the certified `oidc-provider` package), configured by the test:
// one client (the gateway), development log-in pages that take any login, groups from the login.
// Its token endpoint's answer passes through `tamper`, so a test can forge the ID token the gateway
// receives (another audience, a wrong nonce, an expiry, `alg: none`, an old key).

export const CLIENT_ID = 'llm-gateway';
export const CLIENT_SECRET = 'test-client-secret-0123456789abcdef';

/** A signing key of the provider, with the private half the tests forge tokens with. */
export interface ProviderKey {
  readonly kid: string;
  readonly privateJwk: JWK;
  readonly privateKey: CryptoKey;
}

export async function providerKey(kid: string): Promise<ProviderKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateJwk, privateKey: (await importJWK(privateJwk, 'RS256')) as CryptoKey };
}

/** Rewrites the token endpoint's JSON answer (its `id_token` in particular). */
export type Tamper = (answer: { id_token?: string } & Record<string, unknown>) => Promise<Record<string, unknown>>;

export interface TestProvider {
  /** The issuer: `http://127.0.0.1:<port>`. */
  readonly issuer: string;
  /** Starts answering with a provider that signs with `keys[0]` and publishes all of `keys` (a rotation). */
  useKeys(keys: readonly ProviderKey[]): void;
  /** Set to forge the next token answers; undefined answers as the provider does. */
  tamper: Tamper | undefined;
  /** The ID tokens and access tokens the provider issued (before any tampering), which nothing may show. */
  readonly issued: readonly string[];
  close(): Promise<void>;
}

/**
 * The claims of a login: the login is the subject; `…-unverified` has an unconfirmed email; `…-entra`
 * says it as Microsoft Entra ID does (no `email_verified`, `xms_edov`); `…-admin…` is in `llm-admins`.
 */
function accountClaims(login: string): Record<string, unknown> {
  return {
    sub: login,
    email: `${login}@example.com`,
    ...(login.endsWith('-entra') ? { xms_edov: true } : { email_verified: !login.endsWith('-unverified') }),
    name: `Person ${login}`,
    groups: login.includes('-admin') ? ['llm-admins', 'everyone'] : ['everyone'],
  };
}

export async function startProvider(redirectUris: () => string[]): Promise<TestProvider> {
  let handler: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  let tamper: Tamper | undefined;
  const issued: string[] = [];
  const server = createServer((request, response) => {
    if (request.method === 'POST' && request.url?.startsWith('/token')) interceptTokenAnswer(response, tamper, issued);
    handler!(request, response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const build = (keys: readonly ProviderKey[]) =>
    new Provider(issuer, {
      clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: redirectUris(), response_types: ['code'], grant_types: ['authorization_code'] }],
      jwks: { keys: keys.map((key) => key.privateJwk) as never },
      findAccount: async (_context, login) => ({ accountId: login, claims: async () => accountClaims(login) as never }),
      claims: { openid: ['sub'], email: ['email', 'email_verified', 'xms_edov'], profile: ['name'], groups: ['groups'] },
      // The claims go into the ID token (the gateway reads no userinfo).
      conformIdTokenClaims: false,
      cookies: { keys: ['test-provider-cookie-key'] },
      features: { devInteractions: { enabled: true } },
    }).callback();
  return {
    issuer,
    issued,
    useKeys(keys) {
      handler = build(keys);
    },
    get tamper() {
      return tamper;
    },
    set tamper(value) {
      tamper = value;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Lets the provider write its token answer, keeps its tokens, then hands the JSON to `tamper` before it is sent. */
function interceptTokenAnswer(response: ServerResponse, tamper: Tamper | undefined, issued: string[]): void {
  const end = response.end.bind(response) as (chunk?: unknown) => ServerResponse;
  response.end = ((chunk?: unknown) => {
    const text = chunk === undefined ? '' : Buffer.from(chunk as string | Buffer).toString('utf8');
    let answer: Record<string, unknown>;
    try {
      answer = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return end(chunk);
    }
    if (response.statusCode !== 200 || typeof answer.id_token !== 'string') return end(chunk);
    for (const value of Object.values(answer)) if (typeof value === 'string' && value.length > 20) issued.push(value);
    if (tamper === undefined) return end(chunk);
    void tamper(answer).then((forged) => {
      const body = JSON.stringify(forged);
      response.setHeader('content-length', Buffer.byteLength(body));
      end(body);
    });
    return response;
  }) as ServerResponse['end'];
}

/** The claims of a compact JWT (no verification: the tests forge from the provider's real answer). */
export const claimsOf = (token: string): JWTPayload => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as JWTPayload;

/** The ID token of an answer, re-signed by `key` after `change` edited its claims. */
export const resigned =
  (key: ProviderKey, change: (claims: JWTPayload) => JWTPayload): Tamper =>
  async (answer) => ({
    ...answer,
    id_token: await new SignJWT(change(claimsOf(answer.id_token!))).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' }).sign(key.privateKey),
  });
