import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Account keys start with this prefix; virtual keys get their own, so the auth stage tells them apart. */
export const ACCOUNT_KEY_PREFIX = 'gw-';

// One-shot `hash()`: half the CPU of createHash().update().digest(); this runs on every request.
const sha256 = (value: string): Buffer => hash('sha256', value, 'buffer');

/**
 * The account API key. Only its SHA-256 is kept (in memory and, when generated, in
 * `<dataDir>/account-key.json`); comparison is in constant time over the hashes.
 */
export class AccountKey {
  private constructor(private readonly hash: Buffer) {}

  /** From `GATEWAY_API_KEY` when set; else the stored hash; else a new key, stored hashed and returned once. */
  static load(dataDir: string, configured: string | undefined): { accountKey: AccountKey; generated?: string } {
    if (configured) return { accountKey: new AccountKey(sha256(configured)) };
    const file = join(dataDir, 'account-key.json');
    try {
      const stored = JSON.parse(readFileSync(file, 'utf8')) as { sha256: string };
      return { accountKey: new AccountKey(Buffer.from(stored.sha256, 'hex')) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const generated = `${ACCOUNT_KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${JSON.stringify({ sha256: sha256(generated).toString('hex') })}\n`, { mode: 0o600 });
    return { accountKey: new AccountKey(sha256(generated)), generated };
  }

  matches(candidate: string): boolean {
    return timingSafeEqual(sha256(candidate), this.hash);
  }
}
