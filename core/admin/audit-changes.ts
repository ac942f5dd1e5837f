/** Fields never written to the audit trail, not even hashed. */
const SECRET_FIELDS = new Set(['key', 'key_hash', 'key_hint', 'token', 'token_hash', 'provider_key', 'api_key', 'secret', 'sealed', 'fields', 'password', 'client_secret']);

/** The before/after of every field that differs between two views of a record, secrets left out. */
export function auditChanges(before: object, after: object): Record<string, { before?: unknown; after?: unknown }> {
  const changes: Record<string, { before?: unknown; after?: unknown }> = {};
  const old = before as Record<string, unknown>;
  const next = after as Record<string, unknown>;
  for (const field of new Set([...Object.keys(old), ...Object.keys(next)])) {
    if (SECRET_FIELDS.has(field) || field === 'updated_at') continue;
    if (JSON.stringify(old[field]) !== JSON.stringify(next[field])) changes[field] = { before: old[field] ?? null, after: next[field] ?? null };
  }
  return changes;
}
