import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

/** A signing key of the fake issuer: its private half signs, its public JWK is published (or not). */
export interface IssuerKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function issuerKey(kid: string, alg = 'RS256'): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A loopback issuer: its OpenID discovery document and its JWK Set, whose keys a test swaps (a rotation). */
export interface FakeIssuer {
  /** `http://127.0.0.1:<port>`: the issuer identifier and the base of its documents. */
  readonly url: string;
  /** How often the JWK Set was fetched. */
  readonly jwksFetches: () => number;
  publish(keys: readonly IssuerKey[]): void;
  close(): Promise<void>;
}

export async function startIssuer(keys: readonly IssuerKey[]): Promise<FakeIssuer> {
  let published = keys.map((key) => key.publicJwk);
  let fetches = 0;
  let url = '';
  const server = createServer((request, response) => {
    response.setHeader('content-type', 'application/json');
    if (request.url === '/.well-known/openid-configuration') return response.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }));
    if (request.url === '/jwks') {
      fetches++;
      return response.end(JSON.stringify({ keys: published }));
    }
    response.statusCode = 404;
    response.end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    jwksFetches: () => fetches,
    publish(next) {
      published = next.map((key) => key.publicJwk);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A token signed by `key`; `claims` override the defaults (an hour of validity from `nowSeconds`). */
export function mint(key: IssuerKey, claims: JWTPayload, nowSeconds = Math.floor(Date.now() / 1000)): Promise<string> {
  return new SignJWT({ iat: nowSeconds, exp: nowSeconds + 3600, ...claims }).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}

/** An unsecured token (`alg: none`), which no verifier may accept. */
export const unsigned = (claims: JWTPayload): string =>
  `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
