import { randomBytes } from 'node:crypto';
import test from 'ava';
import { keyId, rewrap, seal, type SealedSecret, TamperedError, unseal } from '../../core/vault/crypto.js';

const master = randomBytes(32);
const secret = 'sk-sealed-secret-0123456789abcdef';

/** Flips one bit at `index` of a base64 field. */
function flip(field: string, index: number): string {
  const bytes = Buffer.from(field, 'base64');
  bytes[index] ^= 0x01;
  return bytes.toString('base64');
}

test('a sealed secret opens with its master key and record id, and holds no plaintext', (t) => {
  const sealed = seal(master, 'cred_1', secret);
  t.is(sealed.kid, keyId(master));
  t.false(JSON.stringify(sealed).includes(secret));
  t.is(unseal(master, 'cred_1', sealed), secret);
});

test('each record gets its own data key: the same secret seals differently', (t) => {
  const first = seal(master, 'cred_1', secret);
  const second = seal(master, 'cred_1', secret);
  t.not(first.wrappedKey, second.wrappedKey);
  t.not(first.ciphertext, second.ciphertext);
});

for (const [label, tamper] of [
  ['a flipped ciphertext byte', (sealed: SealedSecret) => ({ ...sealed, ciphertext: flip(sealed.ciphertext, 30) })],
  ['a flipped tag byte', (sealed: SealedSecret) => ({ ...sealed, ciphertext: flip(sealed.ciphertext, 14) })],
  ['a flipped wrapped-key byte', (sealed: SealedSecret) => ({ ...sealed, wrappedKey: flip(sealed.wrappedKey, 40) })],
  ['a truncated ciphertext', (sealed: SealedSecret) => ({ ...sealed, ciphertext: Buffer.from(sealed.ciphertext, 'base64').subarray(0, 20).toString('base64') })],
  ['another record’s data key', (sealed: SealedSecret) => ({ ...sealed, wrappedKey: seal(master, 'cred_1', 'other').wrappedKey })],
] as const) {
  test(`tampering is refused whole: ${label}`, (t) => {
    const sealed = seal(master, 'cred_1', secret);
    t.throws(() => unseal(master, 'cred_1', tamper(sealed)), { instanceOf: TamperedError });
  });
}

test('a ciphertext moved to another record id is refused', (t) => {
  const sealed = seal(master, 'cred_1', secret);
  t.throws(() => unseal(master, 'cred_2', sealed), { instanceOf: TamperedError });
});

test('another master key cannot open the secret', (t) => {
  const sealed = seal(master, 'cred_1', secret);
  t.throws(() => unseal(randomBytes(32), 'cred_1', sealed), { instanceOf: TamperedError });
});

test('rewrap moves the data key under a new master key and keeps the ciphertext', (t) => {
  const next = randomBytes(32);
  const sealed = seal(master, 'cred_1', secret);
  const moved = rewrap(master, next, 'cred_1', sealed);
  t.is(moved.ciphertext, sealed.ciphertext);
  t.is(moved.kid, keyId(next));
  t.is(unseal(next, 'cred_1', moved), secret);
  t.throws(() => unseal(master, 'cred_1', moved), { instanceOf: TamperedError });
});
