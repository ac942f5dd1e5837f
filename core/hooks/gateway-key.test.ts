import { hash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { AccountKey } from '../identity/account-key.js';
import { gatewayKeyTest } from '../identity/caller.js';

const ACCOUNT = 'gw-unit-account-key-0123456789abcdef';
const resolvers = [{ prefix: 'vk-', resolve: async () => undefined }];

test('a gateway key is a value a resolver claims by prefix, or the account key; nothing else', (t) => {
  const isGatewayKey = gatewayKeyTest(AccountKey.load(mkdtempSync(join(tmpdir(), 'gw-key-')), ACCOUNT).accountKey, resolvers);
  t.true(isGatewayKey(ACCOUNT));
  t.true(isGatewayKey('vk-anything, even a value no key has'));
  t.false(isGatewayKey(`${ACCOUNT}x`));
  t.false(isGatewayKey(ACCOUNT.slice(0, -1)));
  t.false(isGatewayKey('sk-proj-a-provider-token-0123456789'));
  t.false(isGatewayKey(' vk-with-a-space-before'), 'callers trim; the test is exact');
});

test('the account key is hashed only for values of its length; a key file without a length hashes every value of 24 characters or more', (t) => {
  const configured = AccountKey.load(mkdtempSync(join(tmpdir(), 'gw-key-')), ACCOUNT).accountKey;
  t.true(configured.mayMatch('x'.repeat(ACCOUNT.length)));
  t.false(configured.mayMatch('x'.repeat(ACCOUNT.length + 1)));
  const directory = mkdtempSync(join(tmpdir(), 'gw-key-'));
  AccountKey.store(directory, ACCOUNT);
  const stored = AccountKey.load(directory, undefined).accountKey;
  t.true(stored.matches(ACCOUNT));
  t.false(stored.mayMatch('x'.repeat(ACCOUNT.length - 1)));
  const older = mkdtempSync(join(tmpdir(), 'gw-key-'));
  writeFileSync(join(older, 'account-key.json'), JSON.stringify({ sha256: hash('sha256', ACCOUNT) }));
  const legacy = AccountKey.load(older, undefined).accountKey;
  t.true(legacy.mayMatch('x'.repeat(24)));
  t.false(legacy.mayMatch('x'.repeat(23)));
  t.true(gatewayKeyTest(legacy, resolvers)(ACCOUNT));
});
