import { createHash } from 'node:crypto';

// The audit trail's event, its canonical form and its hash (docs/audit.md). The hash covers every
// field but itself, `prev_hash` included, so each event seals the one before it.

/** Who acted: the account key, a user, a service account, a personal token, the host's command line, or the gateway itself (retention). */
export interface AuditActor {
  readonly type: 'account' | 'user' | 'service-account' | 'scim' | 'cli' | 'system';
  readonly id?: string;
  /** A name for people (an email, a token's name); never a secret. */
  readonly label?: string;
  /** The personal or service-account token an admin call presented (its id, never its value). */
  readonly token_id?: string;
}

/** What was acted on. */
export interface AuditTarget {
  readonly type: string;
  readonly id: string;
  /** The team that owns it, when it belongs to one (a team's admins read the events of their team's objects). */
  readonly team?: string;
}

/** The before and after of each changed field (secrets never: {@link auditChanges}). */
export type AuditChanges = Record<string, { before?: unknown; after?: unknown }>;

export type AuditOutcome = 'success' | 'denied' | 'failure';

/** What a caller records; the trail adds the id, the sequence number, the time and the hashes. */
export interface AuditInput {
  readonly actor: AuditActor;
  /** Dotted, noun first: `keys.create`, `dashboard.sign-in`, `audit.retention`. */
  readonly action: string;
  readonly target?: AuditTarget;
  readonly changes?: AuditChanges;
  readonly outcome: AuditOutcome;
  /** The client's address (as the admin guard counts it). */
  readonly address?: string;
  readonly userAgent?: string;
}

/** One stored event, as `GET /admin/audit` and the export show it. */
export interface AuditEvent {
  readonly id: string;
  /** 1, 2, 3, …: gap-free in the whole chain (retention removes whole prefixes). */
  readonly seq: number;
  /** ISO 8601, milliseconds, UTC. */
  readonly time: string;
  readonly actor: AuditActor;
  readonly action: string;
  readonly target: AuditTarget | null;
  readonly changes: AuditChanges | null;
  readonly outcome: AuditOutcome;
  readonly address: string | null;
  readonly user_agent: string | null;
  /** The previous event's `hash` ({@link GENESIS_HASH} for the first). */
  readonly prev_hash: string;
  /** SHA-256 (hex) of {@link canonicalJson} of every other field. */
  readonly hash: string;
}

/** The `prev_hash` of the chain's first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** The action of the event retention appends after removing old segments. */
export const RETENTION_ACTION = 'audit.retention';

/**
 * JSON with every object's keys sorted and `undefined` members left out: the same value gives the
 * same bytes whichever store it came back from (PostgreSQL's jsonb, for one, reorders keys).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** The hash an event must carry: SHA-256 over the canonical form of all its fields but `hash`. */
export function eventHash(event: Omit<AuditEvent, 'hash'> & { hash?: string }): string {
  const { hash: _ignored, ...fields } = event;
  return createHash('sha256').update(canonicalJson(fields)).digest('hex');
}

/** The field names whose values are never recorded, before or after (nor hashed). */
const SECRET_FIELDS = new Set(['key', 'key_hash', 'api_key', 'provider_key', 'secret', 'token', 'password', 'sealed', 'client_secret']);
/** `access_token`, `db_password`, `webhook_secret`, `secret_access_key`, `private_key`, …: named like a secret. */
const SECRET_NAME = /(^|[_-])(secret|password|passphrase|token|key|key_hash)$|^secret[_-]/i;

/** A vault-sealed secret (`{ kid, wrappedKey, ciphertext }`), or anything shaped like one. */
const isSealed = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && ('ciphertext' in value || 'wrappedKey' in value || 'wrapped_key' in value);

/** A value with every secret-named field and sealed value removed, at any depth. */
function withoutSecrets(value: unknown, isSecret: (field: string) => boolean): unknown {
  if (Array.isArray(value)) return value.filter((item) => !isSealed(item)).map((item) => withoutSecrets(item, isSecret));
  if (typeof value !== 'object' || value === null) return value;
  const kept: Record<string, unknown> = {};
  for (const [field, inner] of Object.entries(value)) {
    if (isSecret(field) || isSealed(inner)) continue;
    kept[field] = withoutSecrets(inner, isSecret);
  }
  return kept;
}

/**
 * The before and after of the fields that changed between two versions of an object (a created
 * object has no before, a deleted one no after). Secrets never appear, not even hashed: fields
 * named `key`, `key_hash`, `api_key`, `provider_key`, `secret`, `token`, `password`, `sealed`, named
 * like one (`*_key`, `*_token`, `*_secret`, `*_password`, `secret_*`), any in `secretFields`, and sealed values, at any
 * depth (the event's action says a secret was set or rotated).
 */
export function auditChanges(
  before: Record<string, unknown> | null | undefined,
  after: Record<string, unknown> | null | undefined,
  options: { secretFields?: readonly string[] } = {},
): AuditChanges {
  const extra = new Set(options.secretFields ?? []);
  const isSecret = (field: string) => SECRET_FIELDS.has(field) || extra.has(field) || SECRET_NAME.test(field);
  const changes: AuditChanges = {};
  const fields = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const field of [...fields].sort()) {
    const old = before?.[field];
    const now = after?.[field];
    if (canonicalJson(old ?? null) === canonicalJson(now ?? null)) continue;
    if (isSecret(field) || isSealed(old) || isSealed(now)) continue;
    changes[field] = {
      ...(old === undefined ? {} : { before: withoutSecrets(old, isSecret) }),
      ...(now === undefined ? {} : { after: withoutSecrets(now, isSecret) }),
    };
  }
  return changes;
}

/** Changes with secrets removed again (a caller's mistake must not store one): the same rules as {@link auditChanges}. */
export function scrubChanges(changes: AuditChanges, secretFields: readonly string[] = []): AuditChanges {
  const extra = new Set(secretFields);
  const isSecret = (field: string) => SECRET_FIELDS.has(field) || extra.has(field) || SECRET_NAME.test(field);
  const kept: AuditChanges = {};
  for (const [field, change] of Object.entries(changes)) {
    if (isSecret(field) || isSealed(change?.before) || isSealed(change?.after)) continue;
    kept[field] = {
      ...(change?.before === undefined ? {} : { before: withoutSecrets(change.before, isSecret) }),
      ...(change?.after === undefined ? {} : { after: withoutSecrets(change.after, isSecret) }),
    };
  }
  return kept;
}
