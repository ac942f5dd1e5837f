import test from 'ava';
import { exportJWK, generateKeyPair, type JWK, jwtVerify, SignJWT } from 'jose';
import { JwksCache } from './jwks.js';

async function key(kid: string): Promise<{ jwk: JWK; sign: () => Promise<string> }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return {
    jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' },
    sign: () => new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid }).sign(privateKey),
  };
}

/** A key set served from memory, counting its fetches; `fail` makes the next fetches throw. */
function source(initial: JWK[]) {
  const state = { keys: initial, fetches: 0, fail: false };
  const fetcher = async () => {
    state.fetches++;
    await new Promise((resolve) => setImmediate(resolve));
    if (state.fail) throw new Error('unreachable');
    return { keys: state.keys };
  };
  return { state, fetcher };
}

test('keys are cached; an unknown kid refetches at most once per cooldown; a stale set is refreshed', async (t) => {
  const [one, two] = await Promise.all([key('one'), key('two')]);
  const { state, fetcher } = source([one.jwk]);
  let now = 1_000_000;
  const cache = new JwksCache(async () => 'https://issuer.example/jwks', { now: () => now, cooldownMs: 30_000, maxAgeMs: 600_000, fetcher });
  await jwtVerify(await one.sign(), cache.getKey);
  await jwtVerify(await one.sign(), cache.getKey);
  t.is(state.fetches, 1);

  state.keys = [two.jwk];
  await t.throwsAsync(jwtVerify(await two.sign(), cache.getKey), { code: 'ERR_JWKS_NO_MATCHING_KEY' });
  await t.throwsAsync(jwtVerify(await two.sign(), cache.getKey), { code: 'ERR_JWKS_NO_MATCHING_KEY' });
  t.is(state.fetches, 1, 'within the cooldown of the last fetch, nothing is fetched');

  now += 30_000;
  await jwtVerify(await two.sign(), cache.getKey);
  t.is(state.fetches, 2);
  await t.throwsAsync(jwtVerify(await one.sign(), cache.getKey), { code: 'ERR_JWKS_NO_MATCHING_KEY' }, 'the retired key is gone with the refresh');

  state.keys = [one.jwk];
  now += 600_000;
  await jwtVerify(await one.sign(), cache.getKey);
  t.is(state.fetches, 3, 'a set older than maxAgeMs is fetched again');
});

test('concurrent lookups share one fetch; a failed refresh keeps the last set; attempts are spaced', async (t) => {
  const one = await key('one');
  const { state, fetcher } = source([one.jwk]);
  let now = 0;
  const cache = new JwksCache(async () => 'https://issuer.example/jwks', { now: () => now, cooldownMs: 10_000, maxAgeMs: 60_000, fetcher });
  const token = await one.sign();
  await Promise.all([jwtVerify(token, cache.getKey), jwtVerify(token, cache.getKey), jwtVerify(token, cache.getKey)]);
  t.is(state.fetches, 1);

  state.fail = true;
  now += 60_000;
  await jwtVerify(token, cache.getKey);
  t.is(state.fetches, 2, 'the stale set was tried once');
  await jwtVerify(token, cache.getKey);
  t.is(state.fetches, 2, 'and not again within the cooldown');
});

test('an unreachable set fails the lookup, and is not asked again within the cooldown', async (t) => {
  const one = await key('one');
  const { state, fetcher } = source([one.jwk]);
  state.fail = true;
  let now = 0;
  const cache = new JwksCache(async () => 'https://issuer.example/jwks', { now: () => now, cooldownMs: 10_000, fetcher });
  const token = await one.sign();
  await t.throwsAsync(jwtVerify(token, cache.getKey), { message: 'unreachable', name: 'Error' });
  await t.throwsAsync(jwtVerify(token, cache.getKey), { message: /a moment ago/ });
  t.is(state.fetches, 1);
  state.fail = false;
  now += 10_000;
  await jwtVerify(token, cache.getKey);
  t.is(state.fetches, 2);
});

test('symmetric keys in a set are ignored, and at most maxKeys keys are kept', async (t) => {
  const keys = await Promise.all(['a', 'b', 'c'].map((kid) => key(kid)));
  const secret = { kty: 'oct', k: Buffer.from('a shared secret of thirty-two bytes!').toString('base64url'), kid: 'hmac', alg: 'HS256' };
  const { fetcher } = source([secret, ...keys.map((one) => one.jwk)]);
  const cache = new JwksCache(async () => 'https://issuer.example/jwks', { maxKeys: 2, fetcher });
  await jwtVerify(await keys[0].sign(), cache.getKey);
  await jwtVerify(await keys[1].sign(), cache.getKey);
  await t.throwsAsync(jwtVerify(await keys[2].sign(), cache.getKey), { code: 'ERR_JWKS_NO_MATCHING_KEY' });
  const hmac = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'HS256', kid: 'hmac' }).sign(Buffer.from('a shared secret of thirty-two bytes!'));
  await t.throwsAsync(jwtVerify(hmac, cache.getKey));
});
