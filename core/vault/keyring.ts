import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keyId } from './crypto.js';

/**
 * The master keys, loaded only inside the vault worker. `GATEWAY_MASTER_KEY` holds one key, or a
 * comma-separated list during a rotation (all unseal; the key a rotation made current in the shared
 * state seals, else the first); each key is 32 bytes as 64 hex characters or base64. Without it,
 * `<dataDir>/master.key` (one base64 key per line, first active) is read, or created with 0600
 * permissions on first start.
 */
export interface Keyring {
  readonly active: Buffer;
  readonly byId: ReadonlyMap<string, Buffer>;
  /** `env` or the key file's path. */
  readonly source: string;
}

export const MASTER_KEY_FILE = 'master.key';

export function parseMasterKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('a master key must be 32 bytes, written as 64 hex characters or base64');
  return key;
}

function toKeyring(keys: Buffer[], source: string): Keyring {
  return { active: keys[0], byId: new Map(keys.map((key) => [keyId(key), key])), source };
}

export function loadKeyring(fromEnvironment: string | undefined, dataDir: string): Keyring {
  if (fromEnvironment) return toKeyring(fromEnvironment.split(',').filter((part) => part.trim()).map(parseMasterKey), 'GATEWAY_MASTER_KEY');
  const file = join(dataDir, MASTER_KEY_FILE);
  try {
    return toKeyring(readFileSync(file, 'utf8').split('\n').filter((line) => line.trim()).map(parseMasterKey), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return toKeyring([key], file);
}

/** Writes the key file with `keys` (first active), 0600. */
export function writeKeyFile(dataDir: string, keys: readonly Buffer[]): void {
  const file = join(dataDir, MASTER_KEY_FILE);
  writeFileSync(file, keys.map((key) => `${key.toString('base64')}\n`).join(''), { mode: 0o600 });
  chmodSync(file, 0o600);
}
