import { randomUUID } from 'node:crypto';
import type { SharedState } from '../store/state.js';
import type { ProviderCredentials } from '../spec/provider.js';
import type { CredentialRecord, CredentialSecret } from './records.js';
import type { Vault } from './vault.js';

const SET = 'credentials';
const recordKey = (id: string) => `cred:${id}`;

/**
 * Provider credentials: sealed by the vault worker, stored in the shared state. Decrypted values
 * are cached in this thread for `cacheTtlMs` at most and dropped at once when any instance changes
 * or deletes the credential.
 */
export class Credentials {
  private readonly cache = new Map<string, { credentials: ProviderCredentials; until: number }>();

  constructor(
    private readonly state: SharedState,
    private readonly vault: Vault,
    private readonly cacheTtlMs: number,
  ) {
    state.subscribe((event) => {
      if (event.kind === 'credential') this.cache.delete(event.id);
    });
  }

  /** Drops the decrypted credential from this thread's cache. */
  forget(id: string): void {
    this.cache.delete(id);
  }

  async create(input: { name: string; provider?: string; secret: CredentialSecret; ownerKeyId?: string }): Promise<CredentialRecord> {
    const id = `cred_${randomUUID().replaceAll('-', '')}`;
    const record: CredentialRecord = {
      id,
      name: input.name,
      ...(input.provider ? { provider: input.provider } : {}),
      has_api_key: input.secret.api_key !== undefined,
      field_names: Object.keys(input.secret.fields ?? {}).sort(),
      ...(input.ownerKeyId ? { owner_key_id: input.ownerKeyId } : {}),
      created_at: new Date().toISOString(),
      sealed: await this.vault.seal(id, JSON.stringify(input.secret)),
    };
    await this.state.records.set(recordKey(id), record);
    await this.state.addToSet(SET, id);
    return record;
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
    if (this.cacheTtlMs > 0) this.cache.set(id, { credentials, until: now + this.cacheTtlMs });
    return credentials;
  }

  /** Re-wraps every data key under the active master key; returns how many records changed. */
  async rewrapAll(): Promise<number> {
    let changed = 0;
    for (const record of await this.list()) {
      const sealed = await this.vault.rewrap(record.id, record.sealed);
      if (sealed.kid === record.sealed.kid) continue;
      await this.state.records.set(recordKey(record.id), { ...record, sealed });
      changed += 1;
    }
    return changed;
  }
}
