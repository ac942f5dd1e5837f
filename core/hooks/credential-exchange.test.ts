import { Readable } from 'node:stream';
import test from 'ava';
import type { UpstreamClient } from '../http/upstream.js';
import type { AuthSlice } from '../pipeline/context.js';
import type { ProviderPlugin, UpstreamRequest } from '../spec/provider.js';
import { GatewayError } from '../errors.js';
import { CredentialExchanges } from './credential-exchange.js';

/** An upstream client whose token endpoint answers `answer()` and records the requests. */
function tokenEndpoint(answer: () => { status: number; body: unknown }) {
  const sent: UpstreamRequest[] = [];
  const client = {
    send: async (request: UpstreamRequest) => {
      sent.push(request);
      const { status, body } = answer();
      return { origin: 'http://127.0.0.1:1', status, headers: {}, body: Readable.from([Buffer.from(JSON.stringify(body))]) };
    },
  } as unknown as UpstreamClient;
  return { client, sent };
}

const provider = {
  id: 'exchanging',
  credentialExchange: {
    applies: (target) => target.credentials.apiKey?.startsWith('key-') === true,
    toUpstream: (target) => ({ method: 'POST', url: 'http://127.0.0.1:1/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `key=${target.credentials.apiKey}` }),
    fromUpstream: (body) => ({ token: (body as { token: string }).token, expiresAt: (body as { expiresAt?: number }).expiresAt }),
  },
} as Partial<ProviderPlugin> as ProviderPlugin;

const auth = (apiKey: string): AuthSlice => ({ provider, target: { baseUrl: 'http://127.0.0.1:1', customHost: false, headers: {}, credentials: { apiKey }, strict: true }, forwardHeaders: {} }) as Partial<AuthSlice> as AuthSlice;

test('one token per credential, kept under a hash (never the secret), renewed half-way through a short lifetime', async (t) => {
  let time = 1_000_000;
  let issued = 0;
  const { client, sent } = tokenEndpoint(() => ({ status: 200, body: { token: `token-${++issued}`, expiresAt: time + 60_000 } }));
  const exchanges = new CredentialExchanges(client, () => time);
  const [a, b, c] = await Promise.all([exchanges.apply(auth('key-alpha-secret')), exchanges.apply(auth('key-alpha-secret')), exchanges.apply(auth('key-beta-secret'))]);
  t.is(a.target.credentials.exchangedToken, b.target.credentials.exchangedToken);
  t.not(a.target.credentials.exchangedToken, c.target.credentials.exchangedToken);
  t.is(sent.length, 2);
  t.is(exchanges.size, 2);
  const keys = [...(exchanges as unknown as { sources: Map<string, unknown> }).sources.keys()];
  t.false(keys.some((key) => key.includes('secret') || key.includes('alpha')));
  // A credential the provider does not exchange is left as it is.
  const ready = auth('ready-token');
  t.is(await exchanges.apply(ready), ready);
  time += 29_000;
  t.is((await exchanges.apply(auth('key-alpha-secret'))).target.credentials.exchangedToken, a.target.credentials.exchangedToken);
  time += 2_000; // past half of the 60 s lifetime
  t.not((await exchanges.apply(auth('key-alpha-secret'))).target.credentials.exchangedToken, a.target.credentials.exchangedToken);
  t.is(sent.length, 3);
  // After a 401: a new token; an auth without an exchanged token is not renewed.
  const renewed = await exchanges.renew(a);
  t.truthy(renewed?.target.credentials.exchangedToken);
  t.is(await exchanges.renew(auth('key-alpha-secret')), undefined);
});

test('a refusal is a 401, a failure or an answer without a token a 502; neither names the secret, and neither is kept', async (t) => {
  let status = 400;
  let body: unknown = { error: 'no such key-gamma-secret' };
  const { client, sent } = tokenEndpoint(() => ({ status, body }));
  const exchanges = new CredentialExchanges(client, () => 0);
  const refused = await t.throwsAsync(exchanges.apply(auth('key-gamma-secret')), { instanceOf: GatewayError });
  t.like(refused!.body, { code: 'credential_exchange_refused' });
  t.is((refused as GatewayError).status, 401);
  status = 503;
  const failed = await t.throwsAsync(exchanges.apply(auth('key-gamma-secret')), { instanceOf: GatewayError });
  t.is((failed as GatewayError).status, 502);
  t.like(failed!.body, { code: 'credential_exchange_failed' });
  status = 200;
  body = { nothing: true };
  const empty = await t.throwsAsync(exchanges.apply(auth('key-gamma-secret')), { instanceOf: GatewayError });
  t.like(empty!.body, { code: 'credential_exchange_failed' });
  for (const error of [refused, failed, empty]) t.false(JSON.stringify((error as GatewayError).body).includes('gamma'));
  t.is(sent.length, 3);
});
