import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { errors } from '../errors.js';
import { FailedAuthLimiter } from './failed-auth.js';
import { clientAddress } from '../http/client-address.js';

const refusal = () => errors.authentication('wrong key', { code: 'invalid_api_key' });

test('failures are counted in fixed windows per address; the window ends and the address may fail again', (t) => {
  let now = 1_000_000;
  const limiter = new FailedAuthLimiter({ perAddress: 2, global: 100, windowMs: 60_000, maxAddresses: 10 }, () => now);
  t.is(limiter.failure('a', refusal()).status, 401);
  t.is(limiter.failure('a', refusal()).status, 401);
  const throttled = limiter.failure('a', refusal());
  t.is(throttled.status, 429);
  t.is(throttled.body.code, 'too_many_failed_auth');
  t.is(throttled.headers['retry-after'], '60');
  now += 30_000;
  t.is(limiter.failure('a', refusal()).headers['retry-after'], '30');
  now += 30_000;
  t.is(limiter.failure('a', refusal()).status, 401, 'a new window');
});

test('the addresses tracked are bounded: the oldest window is forgotten first', (t) => {
  let now = 0;
  const limiter = new FailedAuthLimiter({ perAddress: 1, global: 1_000_000, windowMs: 60_000, maxAddresses: 3 }, () => now);
  for (const address of ['a', 'b', 'c', 'd', 'e']) {
    now += 1;
    limiter.failure(address, refusal());
  }
  t.is(limiter.trackedAddresses, 3);
  t.is(limiter.failure('e', refusal()).status, 429, 'a recent address is still counted');
  t.is(limiter.failure('a', refusal()).status, 401, 'the oldest was forgotten');
});

const fakeRequest = (peer: string, forwarded?: string) =>
  ({ socket: { remoteAddress: peer }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

test('clientAddress: the socket address unless proxies are trusted; then the entry N from the right', (t) => {
  t.is(clientAddress(fakeRequest('::ffff:127.0.0.1', '203.0.113.1'), 0), '127.0.0.1');
  t.is(clientAddress(fakeRequest('127.0.0.1', 'forged, 203.0.113.1'), 1), '203.0.113.1');
  t.is(clientAddress(fakeRequest('127.0.0.1', 'forged, 203.0.113.1, 10.0.0.2'), 2), '203.0.113.1');
  t.is(clientAddress(fakeRequest('127.0.0.1', '203.0.113.1'), 3), '203.0.113.1', 'fewer entries than hops: the leftmost');
  t.is(clientAddress(fakeRequest('127.0.0.1'), 1), '127.0.0.1', 'no header: the socket');
});
