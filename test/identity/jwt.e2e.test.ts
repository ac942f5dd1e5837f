import test from 'ava';
import { type CryptoKey, exportSPKI, importJWK, SignJWT } from 'jose';
import { createGateway } from '../../core/app.js';
import type { VerifiedClaims } from '../../core/identity/jwt.js';
import type { KeyResolution } from '../../core/spec/key-resolver.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin } from '../vault/vault-harness.js';
import { type FakeIssuer, type IssuerKey, issuerKey, mint, startIssuer, unsigned } from './jwks-issuer.js';

// JWT callers (docs/sso.md): a bearer token of a configured issuer is verified against the issuer's
// JWK Set (found by discovery) and mapped to a caller by the injected mapper.

const AUDIENCE = 'llm-gateway';
const UPSTREAM_KEY = 'sk-service-account-upstream-key';
const DOWN_ISSUER = 'https://unreachable-issuer.example';

let fake: Fake;
let issuer: FakeIssuer;
let first: IssuerKey;
let second: IssuerKey;
let outsider: IssuerKey;
let gateway: TestGateway;
let now = Date.now();
const mapped: VerifiedClaims[] = [];

test.before(async () => {
  [first, second, outsider] = await Promise.all([issuerKey('key-1'), issuerKey('key-2', 'ES256'), issuerKey('key-outsider')]);
  fake = await startFake();
  issuer = await startIssuer([first]);
  // The mapper stands for the user directory: a subject acts as a stored virtual key, whose target,
  // credential and limits then apply (the lead maps subjects to service accounts the same way).
  const keyOfSubject = new Map<string, string>();
  const mapClaims = async (claims: VerifiedClaims): Promise<KeyResolution | undefined> => {
    mapped.push(claims);
    const key = keyOfSubject.get(claims.sub ?? '');
    return key === undefined ? undefined : gateway.gateway.vault.resolver.resolve(key, {});
  };
  // A second issuer whose key set nobody serves (port 9, discard: refused on loopback).
  const jwt = [{ issuer: issuer.url, audience: AUDIENCE }, { issuer: DOWN_ISSUER, audience: AUDIENCE, jwksUri: 'http://127.0.0.1:9/jwks' }];
  gateway = await startGateway({ auth: { jwt } }, {}, { clock: { now: () => now }, identity: { mapClaims } });
  for (const [subject, limits] of [['ci-pipeline', {}], ['limited-job', { requests_per_minute: 1 }]] as const) {
    const created = await admin(gateway, 'POST', '/admin/virtual-keys', { name: subject, provider: 'openai', provider_key: UPSTREAM_KEY, custom_host: fake.baseUrl, limits });
    keyOfSubject.set(subject, created.json.key);
  }
});

test.after.always(async () => {
  await gateway?.close();
  await issuer?.close();
  await fake?.close();
});

const seconds = () => Math.floor(now / 1000);
const claims = (extra: Record<string, unknown> = {}) => ({ iss: issuer.url, aud: AUDIENCE, sub: 'ci-pipeline', ...extra });

async function chat(token: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await response.text();
  return { status: response.status, text, error: (JSON.parse(text) as { error?: { code: string; message: string } }).error };
}

test.serial('a mapped token reaches the provider with the mapped credential; the token never goes upstream', async (t) => {
  const token = await mint(first, claims(), seconds());
  const before = fake.requests.length;
  const { status, text } = await chat(token);
  t.is(status, 200, text);
  t.is(fake.requests.length, before + 1);
  const upstream = fake.requests.at(-1)!;
  t.is(upstream.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
  t.false(JSON.stringify(upstream.headers).includes(token));
  t.like(mapped.at(-1), { iss: issuer.url, sub: 'ci-pipeline', aud: AUDIENCE });
  // The same token in x-gateway-api-key.
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': token },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.is(response.status, 200);
  t.is(fake.requests.at(-1)!.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
});

test.serial("the limits of what the token maps to apply (requests per minute)", async (t) => {
  const token = await mint(first, claims({ sub: 'limited-job' }), seconds());
  t.is((await chat(token)).status, 200);
  const again = await chat(token);
  t.is(again.status, 429);
});

test.serial('a verified token that maps to nothing is 401 jwt_not_mapped and reaches no provider', async (t) => {
  const before = fake.requests.length;
  const token = await mint(first, claims({ sub: 'someone-else' }), seconds());
  const { status, error, text } = await chat(token);
  t.is(status, 401);
  t.is(error?.code, 'jwt_not_mapped');
  t.false(text.includes(token));
  t.is(fake.requests.length, before);
});

const refusals: Array<[string, () => Promise<string>, RegExp]> = [
  ['a tampered payload', async () => {
    const [header, , signature] = (await mint(first, claims(), seconds())).split('.');
    return `${header}.${Buffer.from(JSON.stringify(claims({ sub: 'ci-pipeline', admin: true }))).toString('base64url')}.${signature}`;
  }, /signature is not valid/],
  ['another audience', () => mint(first, claims({ aud: 'another-service' }), seconds()), /aud claim/],
  ['an expired token (past the clock skew)', () => mint(first, claims({ exp: seconds() - 120 }), seconds() - 4000), /expired/],
  ['a token not valid yet (nbf past the clock skew)', () => mint(first, claims({ nbf: seconds() + 600 }), seconds()), /not valid yet/],
  ['a token without exp', async () => new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: first.kid }).sign(first.privateKey), /exp claim/],
  ['alg: none', async () => unsigned(claims({ exp: seconds() + 600 })), /algorithm is not accepted/],
  ['HS256 keyed with the public key (algorithm confusion)', async () => {
    const pem = await exportSPKI((await importJWK(first.publicJwk, 'RS256', { extractable: true })) as CryptoKey);
    return new SignJWT(claims({ exp: seconds() + 600 })).setProtectedHeader({ alg: 'HS256', kid: first.kid }).sign(new TextEncoder().encode(pem));
  }, /algorithm is not accepted/],
  ['a key the issuer does not publish', () => mint(outsider, claims(), seconds()), /key its issuer does not publish/],
];
for (const [name, token, reason] of refusals) {
  test.serial(`refused: ${name} (401 invalid_jwt, the token never echoed)`, async (t) => {
    const before = fake.requests.length;
    const value = await token();
    const { status, error, text } = await chat(value);
    t.is(status, 401);
    t.is(error?.code, 'invalid_jwt');
    t.regex(error?.message ?? '', reason);
    t.false(text.includes(value));
    t.false(gateway.rawLog().includes(value));
    t.is(fake.requests.length, before);
  });
}

test.serial("an issuer whose keys cannot be fetched: 502 jwt_keys_unavailable, the token never echoed", async (t) => {
  const token = await mint(first, { iss: DOWN_ISSUER, aud: AUDIENCE, sub: 'ci-pipeline' }, seconds());
  const { status, error, text } = await chat(token);
  t.is(status, 502);
  t.is(error?.code, 'jwt_keys_unavailable');
  t.false(text.includes(token));
});

test.serial('a token a few seconds past exp is accepted (clock skew)', async (t) => {
  const { status } = await chat(await mint(first, claims({ exp: seconds() - 10 }), seconds() - 3600));
  t.is(status, 200);
});

test.serial("another issuer's JWT is not taken for a gateway key: it stays the provider credential", async (t) => {
  const foreign = await mint(outsider, { iss: 'https://login.example.com/tenant', aud: 'https://cognitiveservices.azure.com', sub: 'x' }, seconds());
  const { status } = await chat(foreign, { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl });
  t.is(status, 200);
  t.is(fake.requests.at(-1)!.headers.authorization, `Bearer ${foreign}`);
  // Without a gateway key, such a token is no caller at all.
  const alone = await chat(foreign);
  t.is(alone.status, 401);
  t.is(alone.error?.code, 'missing_api_key');
});

test.serial("a token of the configured issuer is never sent upstream as the provider credential", async (t) => {
  const token = await mint(first, claims(), seconds());
  const before = fake.requests.length;
  const { status, error } = await chat(token, { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl });
  t.is(status, 400);
  t.is(error?.code, 'gateway_key_not_forwardable');
  t.is(fake.requests.length, before);
});

test.serial('rotation: a new key is fetched on its first token (at most once per cooldown), and the retired key stops working', async (t) => {
  // A token verified before the rotation (and reused while the key set stays the same): once the
  // set is refreshed without its key, the same token is refused too.
  const earlier = await mint(first, claims(), seconds());
  t.is((await chat(earlier)).status, 200);
  t.is((await chat(earlier)).status, 200);
  issuer.publish([second]);
  const rotated = await mint(second, claims(), seconds());
  // Within the refresh cooldown of the last fetch, unknown keys do not make the gateway fetch again.
  const fetchesBefore = issuer.jwksFetches();
  now += 1000;
  for (let attempt = 0; attempt < 5; attempt++) {
    const { status, error } = await chat(await mint(outsider, claims(), seconds()));
    t.is(status, 401);
    t.is(error?.code, 'invalid_jwt');
  }
  t.is(issuer.jwksFetches(), fetchesBefore, 'unknown kids within the cooldown fetch nothing');
  now += 31_000;
  const accepted = await chat(rotated);
  t.is(accepted.status, 200);
  const retired = await chat(await mint(first, claims(), seconds()));
  t.is(retired.status, 401);
  t.regex(retired.error?.message ?? '', /key its issuer does not publish/);
  const reused = await chat(earlier);
  t.is(reused.status, 401, 'verified before the rotation, refused once the refreshed set no longer has its key');
  t.regex(reused.error?.message ?? '', /key its issuer does not publish/);
  const fetches = issuer.jwksFetches();
  t.is((await chat(await mint(second, claims(), seconds()))).status, 200);
  t.is(issuer.jwksFetches(), fetches, 'a known key is served from the cache');
});

test('boot refuses HMAC algorithms, http issuers off this machine, and an issuer configured twice', (t) => {
  const boot = (auth: object, environment: NodeJS.ProcessEnv = {}) => () => createGateway({ providers: [openai()], auth }, { environment: { GATEWAY_API_KEY: PROVIDER_KEY, ...environment }, logDestination: { write() {} } });
  t.throws(boot({ jwt: [{ issuer: 'https://idp.example.com', audience: 'a', algorithms: ['HS256'] }] }), { message: /HS256.*not accepted/ });
  t.throws(boot({ jwt: [{ issuer: 'http://idp.example.com', audience: 'a' }] }), { message: /must be an https:\/\/ URL/ });
  t.throws(boot({ jwt: [{ issuer: 'https://idp.example.com', audience: 'a' }] }, { GATEWAY_JWT_ISSUER: 'https://idp.example.com', GATEWAY_JWT_AUDIENCE: 'b' }), { message: /configured twice/ });
  t.throws(boot({}, { GATEWAY_JWT_ISSUER: 'https://idp.example.com' }), { message: /audience/ });
});

test('forged tokens count as failed authentications: past the limit, 429 too_many_failed_auth', async (t) => {
  const own = await startIssuer([first]);
  const limited = await startGateway({ auth: { jwt: [{ issuer: own.url, audience: AUDIENCE }] }, server: { failedAuth: { perAddress: 2 } } });
  t.teardown(async () => {
    await limited.close();
    await own.close();
  });
  const forged = await mint(outsider, { iss: own.url, aud: AUDIENCE, sub: 'x' });
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const response = await fetch(`${limited.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${forged}` }, body: '{}' });
    statuses.push(response.status);
    await response.body?.cancel();
  }
  t.deepEqual(statuses, [401, 401, 429]);
});
