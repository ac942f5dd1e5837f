import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BootError } from '../errors.js';

/** Account keys start with this prefix; virtual keys get their own, so the auth stage tells them apart. */
export const ACCOUNT_KEY_PREFIX = 'gw-';

/** The shortest account key accepted from `GATEWAY_API_KEY`; generated keys are 35 characters. */
export const ACCOUNT_KEY_MIN_LENGTH = 24;

/** Where a generated account key's SHA-256 is kept. */
export const ACCOUNT_KEY_FILE = 'account-key.json';

// One-shot `hash()`: half the CPU of createHash().update().digest(); this runs on every request.
const sha256 = (value: string): Buffer => hash('sha256', value, 'buffer');

/**
 * The account API key. Only its SHA-256 is kept (in memory and, when generated, in
 * `<dataDir>/account-key.json`, with its length); comparison is in constant time over the hashes.
 */
export class AccountKey {
  private constructor(
    private readonly hash: Buffer,
    /** The key's length when known (every key but one loaded from a file written before lengths were stored). */
    private readonly length?: number,
  ) {}

  /**
   * From `GATEWAY_API_KEY` when set (at least {@link ACCOUNT_KEY_MIN_LENGTH} characters); else the
   * stored hash; else a new key, returned in `generated` and not stored yet: the caller stores it
   * with {@link AccountKey.store} once it has been shown, so a start that fails before showing it
   * leaves no hash behind that no one knows the key of.
   */
  static load(dataDir: string, configured: string | undefined): { accountKey: AccountKey; generated?: string } {
    if (configured) {
      if (configured.length < ACCOUNT_KEY_MIN_LENGTH) {
        throw new BootError(
          'INVALID_CONFIG',
          `GATEWAY_API_KEY is ${configured.length} characters; an account key must have at least ${ACCOUNT_KEY_MIN_LENGTH} ` +
            `(for example: ${ACCOUNT_KEY_PREFIX}$(openssl rand -base64 24 | tr '+/' '-_')), or leave it unset to have one generated.`,
        );
      }
      return { accountKey: new AccountKey(sha256(configured), configured.length) };
    }
    try {
      const stored = JSON.parse(readFileSync(join(dataDir, ACCOUNT_KEY_FILE), 'utf8')) as { sha256: string; length?: unknown };
      return { accountKey: new AccountKey(Buffer.from(stored.sha256, 'hex'), typeof stored.length === 'number' ? stored.length : undefined) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const generated = AccountKey.generate();
    return { accountKey: new AccountKey(sha256(generated), generated.length), generated };
  }

  /** A new random account key (`gw-` and 32 base64url characters). */
  static generate(): string {
    return `${ACCOUNT_KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
  }

  /** Stores the SHA-256 of `key` (and its length) as the data dir's account key (0600), replacing any stored one at once. */
  static store(dataDir: string, key: string): void {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = join(dataDir, ACCOUNT_KEY_FILE);
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify({ sha256: sha256(key).toString('hex'), length: key.length })}\n`, { mode: 0o600 });
    renameSync(temporary, file);
  }

  /**
   * False when `candidate` cannot be the account key (its length differs from the key's, when that
   * is known): a check without a hash, for the places that test many values that are no gateway key
   * (provider tokens, forwarded headers). True means: ask {@link matches}.
   */
  mayMatch(candidate: string): boolean {
    return this.length === undefined ? candidate.length >= ACCOUNT_KEY_MIN_LENGTH : candidate.length === this.length;
  }

  matches(candidate: string): boolean {
    return timingSafeEqual(sha256(candidate), this.hash);
  }
}
