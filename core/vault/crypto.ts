import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM envelope encryption, run only inside the vault worker. Each record gets its own
 * random data key; the data key is encrypted ("wrapped") under the master key. The record id is
 * authenticated data on both layers, so a ciphertext moved to another record, or any byte changed,
 * fails its tag check and is refused whole.
 */
export interface SealedSecret {
  readonly v: 1;
  /** Id of the master key that wrapped the data key (a fingerprint, not the key). */
  readonly kid: string;
  /** base64: iv (12) | tag (16) | encrypted data key (32). */
  readonly wrappedKey: string;
  /** base64: iv (12) | tag (16) | ciphertext. */
  readonly ciphertext: string;
}

export class TamperedError extends Error {
  constructor(message = 'The sealed secret failed its integrity check (tampered, or another master key).') {
    super(message);
    this.name = 'TamperedError';
  }
}

const ALGORITHM = 'aes-256-gcm';

/** A short, non-secret fingerprint of a master key, stored beside the records it wrapped. */
export function keyId(masterKey: Buffer): string {
  return createHash('sha256').update('gateway-master-key-id\0').update(masterKey).digest('hex').slice(0, 16);
}

function encrypt(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv(ALGORITHM, key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function decrypt(key: Buffer, sealed: Buffer, aad: string): Buffer {
  if (sealed.length < 28) throw new TamperedError();
  const decipher = createDecipheriv(ALGORITHM, key, sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
  } catch {
    throw new TamperedError();
  }
}

export function seal(masterKey: Buffer, recordId: string, plaintext: string): SealedSecret {
  const dataKey = randomBytes(32);
  try {
    return {
      v: 1,
      kid: keyId(masterKey),
      wrappedKey: encrypt(masterKey, dataKey, `key:${recordId}`).toString('base64'),
      ciphertext: encrypt(dataKey, Buffer.from(plaintext, 'utf8'), `data:${recordId}`).toString('base64'),
    };
  } finally {
    dataKey.fill(0);
  }
}

export function unseal(masterKey: Buffer, recordId: string, sealed: SealedSecret): string {
  const dataKey = decrypt(masterKey, Buffer.from(sealed.wrappedKey, 'base64'), `key:${recordId}`);
  try {
    return decrypt(dataKey, Buffer.from(sealed.ciphertext, 'base64'), `data:${recordId}`).toString('utf8');
  } finally {
    dataKey.fill(0);
  }
}

/** Re-wraps the data key under another master key; the ciphertext is untouched. */
export function rewrap(oldKey: Buffer, newKey: Buffer, recordId: string, sealed: SealedSecret): SealedSecret {
  const dataKey = decrypt(oldKey, Buffer.from(sealed.wrappedKey, 'base64'), `key:${recordId}`);
  try {
    return { ...sealed, kid: keyId(newKey), wrappedKey: encrypt(newKey, dataKey, `key:${recordId}`).toString('base64') };
  } finally {
    dataKey.fill(0);
  }
}
