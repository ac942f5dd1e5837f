import { randomUUID } from 'node:crypto';
import type { SharedState } from '../store/state.js';
import type { ProviderCredentials } from '../spec/provider.js';
import type { CredentialRecord, CredentialSecret } from './records.js';
import { errors } from '../errors.js';
import { type Vault, VaultKeyMissingError } from './vault.js';
import type { ProviderQuota } from '../quota/settings.js';

const SET = 'credentials';
const recordKey = (id: string) => `cred:${id}`;

/**
 * Provider credentials: sealed by the vault worker, stored in the shared state. Decrypted values
 * are cached in this thread for `cacheTtlMs` at most and dropped at once when any instance changes
 * or deletes the credential.
 */
export class Credentials {
  private readonly cache = new Map<string, { credentials: ProviderCredentials; until: number }>();
  /** The stored credential each opened value came from, with its quota: the forward stage asks by the value it sends with. */
  private readonly quotas = new WeakMap<ProviderCredentials, { readonly key: string; readonly quota: ProviderQuota }>();

  constructor(
    private readonly state: SharedState,
    private readonly vault: Vault,
    private readonly cacheTtlMs: number,
    /** The shared current master key id (set by a rotation), read before every seal; undefined before any rotation. */
    private readonly currentKeyId: () => Promise<string | undefined> = async () => undefined,
  ) {
    state.subscribe((event) => {
      if (event.kind === 'credential') this.cache.delete(event.id);
    });
  }

  /** Drops the decrypted credential from this thread's cache. */
  forget(id: string): void {
    this.cache.delete(id);
  }

  /** The quota of the stored credential `credentials` was opened from (see {@link open}), if it has one. */
  quotaOf(credentials: ProviderCredentials): { readonly key: string; readonly quota: ProviderQuota } | undefined {
    return this.quotas.get(credentials);
  }

  /** Sets or (null) removes a credential's quota; every instance reads it again from its next request. */
  async setQuota(id: string, quota: ProviderQuota | null): Promise<CredentialRecord | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    const { quota: _old, ...rest } = current;
    const record: CredentialRecord = quota === null ? rest : { ...rest, quota };
    await this.state.records.set(recordKey(id), record);
    this.cache.delete(id);
    await this.state.publish({ kind: 'credential', id });
    return record;
  }

  async create(input: { name: string; provider?: string; secret: CredentialSecret; ownerKeyId?: string; team_id?: string | null; quota?: ProviderQuota }): Promise<CredentialRecord> {
    const id = `cred_${randomUUID().replaceAll('-', '')}`;
    const kid = await this.currentKeyId();
    const record: CredentialRecord = {
      id,
      name: input.name,
      ...(input.provider ? { provider: input.provider } : {}),
      has_api_key: input.secret.api_key !== undefined,
      field_names: Object.keys(input.secret.fields ?? {}).sort(),
      ...(input.ownerKeyId ? { owner_key_id: input.ownerKeyId } : {}),
      ...(input.team_id !== undefined ? { team_id: input.team_id } : {}),
      ...(input.quota !== undefined ? { quota: input.quota } : {}),
      created_at: new Date().toISOString(),
      sealed: await sealing(this.vault.seal(id, JSON.stringify(input.secret), kid)),
    };
    await this.state.records.set(recordKey(id), record);
    await this.state.addToSet(SET, id);
    return this.followRotation(record);
  }

  /**
   * A rotation that made another key current while this record was sealed re-wraps it here: a
   * rotation's sweep lists records after making its key current, so each record is either listed
   * by the sweep or re-wrapped by its writer, and none stays under a key about to be retired.
   */
  private async followRotation(record: CredentialRecord): Promise<CredentialRecord> {
    const current = await this.currentKeyId();
    if (current === undefined || current === record.sealed.kid) return record;
    const updated = { ...record, sealed: await sealing(this.vault.rewrap(record.id, record.sealed, current)) };
    await this.state.records.set(recordKey(record.id), updated);
    return updated;
  }

  /**
   * Replaces the secret of a stored credential, keeping its id (so the keys and routes that name it
   * keep working): sealed anew, then every instance drops the old decrypted value at once.
   */
  async replaceSecret(id: string, secret: CredentialSecret): Promise<CredentialRecord | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    const kid = await this.currentKeyId();
    const record: CredentialRecord = {
      ...current,
      has_api_key: secret.api_key !== undefined,
      field_names: Object.keys(secret.fields ?? {}).sort(),
      rotated_at: new Date().toISOString(),
      sealed: await sealing(this.vault.seal(id, JSON.stringify(secret), kid)),
    };
    await this.state.records.set(recordKey(id), record);
    const followed = await this.followRotation(record);
    this.cache.delete(id);
    await this.state.publish({ kind: 'credential', id });
    return followed;
  }

  async get(id: string): Promise<CredentialRecord | undefined> {
    return (await this.state.records.get<CredentialRecord>(recordKey(id))) ?? undefined;
  }

  async list(): Promise<CredentialRecord[]> {
    const records = await Promise.all((await this.state.members(SET)).map((id) => this.get(id)));
    return records.filter((record): record is CredentialRecord => record !== undefined);
  }

  async delete(id: string): Promise<boolean> {
    const existed = await this.state.records.delete(recordKey(id));
    await this.state.removeFromSet(SET, id);
    await this.state.publish({ kind: 'credential', id });
    return existed;
  }

  /** The decrypted credential (cached briefly); throws VaultTamperedError on a tampered record. */
  async open(id: string): Promise<ProviderCredentials | undefined> {
    const now = Date.now();
    const cached = this.cache.get(id);
    if (cached && cached.until > now) return cached.credentials;
    const record = await this.get(id);
    if (!record) return undefined;
    const secret = JSON.parse(await this.vault.unseal(id, record.sealed)) as CredentialSecret;
    const credentials: ProviderCredentials = {
      ...(secret.api_key !== undefined ? { apiKey: secret.api_key } : {}),
      ...(secret.fields ? { fields: secret.fields } : {}),
    };
    if (record.quota !== undefined) this.quotas.set(credentials, { key: `cred:${id}`, quota: record.quota });
    if (this.cacheTtlMs > 0) this.cache.set(id, { credentials, until: now + this.cacheTtlMs });
    return credentials;
  }

  /** Ids of the master keys the stored credentials are wrapped under. */
  async keyIdsInUse(): Promise<Set<string>> {
    return new Set((await this.list()).map((record) => record.sealed.kid));
  }

  /** Re-wraps every data key under the master key `kid` (else the active one); returns how many records changed. */
  async rewrapAll(kid?: string): Promise<number> {
    let changed = 0;
    for (const record of await this.list()) {
      const sealed = await this.vault.rewrap(record.id, record.sealed, kid);
      if (sealed.kid === record.sealed.kid) continue;
      await this.state.records.set(recordKey(record.id), { ...record, sealed });
      changed += 1;
    }
    return changed;
  }
}

/** A seal the current master key is missing for: a 500 that says so, instead of a seal under a retired key. */
async function sealing<T>(pending: Promise<T>): Promise<T> {
  try {
    return await pending;
  } catch (error) {
    if (error instanceof VaultKeyMissingError) throw errors.internal(error.message, { code: 'master_key_unavailable' });
    throw error;
  }
}
