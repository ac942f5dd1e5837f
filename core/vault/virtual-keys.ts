import { hash, randomBytes, randomUUID } from 'node:crypto';
import { keyReferences, withKeyReferences } from '../routing/key-references.js';
import type { Route } from '../routing/route.js';
import type { SharedState } from '../store/state.js';
import type { VirtualKeyRecord } from './records.js';

/** Every virtual key value starts with this, so the auth stage routes it to the vault's resolver. */
export const VIRTUAL_KEY_PREFIX = 'vk-';

/** Every virtual key id starts with this (`vk_` and 32 hex digits): a route target names a key by its id. */
export const VIRTUAL_KEY_ID_PREFIX = 'vk_';

/**
 * What a stored route names in place of a key value that no key has any more (a key rotated or
 * deleted before routes held ids): an id no key has, so the target is refused (400
 * `unknown_virtual_key`) as the value was.
 */
export const VIRTUAL_KEY_UNKNOWN = 'vk_unknown';

/**
 * A route whose targets (or cache embeddings target) give a key's value (`vk-…`), with each value
 * replaced by its key's id ({@link VIRTUAL_KEY_UNKNOWN} when no key has it); undefined when the
 * route names no value. The stored routes' migration: a value is a secret, an id is not.
 */
export async function routeWithKeyIds(route: Route, keys: Pick<VirtualKeys, 'lookup'>): Promise<Route | undefined> {
  if (!keyReferences(route).some(({ reference }) => reference.startsWith(VIRTUAL_KEY_PREFIX))) return undefined;
  return withKeyReferences(route, async (reference) => (reference.startsWith(VIRTUAL_KEY_PREFIX) ? { virtual_key: (await keys.lookup(reference))?.id ?? VIRTUAL_KEY_UNKNOWN } : undefined));
}

const SET = 'virtual-keys';
const recordKey = (id: string) => `vk:${id}`;
const hashKey = (hash: string) => `vkhash:${hash}`;
const nameClaim = (name: string) => `vkname:${name}`;

/** SHA-256 of a key value: the values carry 256 random bits, so a fast hash is enough to store them. */
export const hashKeyValue = (value: string): string => hash('sha256', value); // one-shot: hex, half createHash()'s CPU

function newKeyValue(): { value: string; hash: string; hint: string } {
  const value = `${VIRTUAL_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { value, hash: hashKeyValue(value), hint: `${VIRTUAL_KEY_PREFIX}…${value.slice(-4)}` };
}

export class DuplicateNameError extends Error {
  override readonly name = 'DuplicateNameError';
}

/** What a caller sets on a key: the stored record's own fields (`log_bodies` defaults to true). */
export type VirtualKeyInput = Pick<
  VirtualKeyRecord,
  'name' | 'provider' | 'credential_id' | 'route' | 'allowed_routes' | 'custom_host' | 'guardrail_policy' | 'mcp' | 'limits' | 'expires_at' | 'log_bodies' | 'team_id' | 'user_id' | 'service_account_id' | 'priority'
>;

/** Fields a PATCH may change; `null` removes an optional one. */
export type VirtualKeyPatch = {
  readonly [Field in keyof VirtualKeyInput]?: VirtualKeyInput[Field] | null;
};

/** How long a looked-up key is trusted without an invalidation event (a guard against a lost one). */
const POSITIVE_TTL_MS = 30_000;
/** How long an unknown value is remembered as unknown (values are random: no new key can match it). */
const NEGATIVE_TTL_MS = 5_000;
const NEGATIVE_LIMIT = 10_000;

/**
 * Virtual keys: records in the shared state, looked up by the hash of their value. Lookups are
 * served from memory; any instance's change or deletion evicts the key everywhere through the
 * state's invalidation events.
 */
export class VirtualKeys {
  private readonly byHash = new Map<string, { record: VirtualKeyRecord; until: number }>();
  private readonly hashById = new Map<string, string>();
  private readonly unknown = new Map<string, number>();
  /** Records read by id for route targets (`virtual_key: "vk_…"`), and ids known to be no key. */
  private readonly byIdCache = new Map<string, { record: VirtualKeyRecord | undefined; until: number }>();
  /** Bumped by every eviction, so a lookup that raced one does not cache what it read before it. */
  private generation = 0;

  constructor(
    private readonly state: SharedState,
    /** Called with a cached record this instance evicts (to drop what was cached for it elsewhere). */
    private readonly onEvict: (record: VirtualKeyRecord) => void = () => {},
  ) {
    state.subscribe((event) => {
      if (event.kind === 'virtual-key') this.evict(event.id);
    });
  }

  /** Creates a key; returns its record and its value (shown once). */
  async create(input: VirtualKeyInput, id = `vk_${randomUUID().replaceAll('-', '')}`): Promise<{ record: VirtualKeyRecord; key: string }> {
    if (!(await this.state.claim(nameClaim(input.name), id))) throw new DuplicateNameError(`A virtual key named "${input.name}" exists.`);
    const { value, hash, hint } = newKeyValue();
    const now = new Date().toISOString();
    const record: VirtualKeyRecord = { id, ...input, log_bodies: input.log_bodies ?? true, created_at: now, updated_at: now, key_hash: hash, key_hint: hint };
    await this.state.records.set(hashKey(hash), id);
    await this.state.records.set(recordKey(id), record);
    await this.state.addToSet(SET, id);
    return { record, key: value };
  }

  async get(id: string): Promise<VirtualKeyRecord | undefined> {
    return (await this.state.records.get<VirtualKeyRecord>(recordKey(id))) ?? undefined;
  }

  async list(): Promise<VirtualKeyRecord[]> {
    const records = await Promise.all((await this.state.members(SET)).map((id) => this.get(id)));
    return records.filter((record): record is VirtualKeyRecord => record !== undefined).sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async update(id: string, patch: VirtualKeyPatch): Promise<VirtualKeyRecord | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    if (patch.name !== undefined && patch.name !== null && patch.name !== current.name) {
      if (!(await this.state.claim(nameClaim(patch.name), id))) throw new DuplicateNameError(`A virtual key named "${patch.name}" exists.`);
      await this.state.release(nameClaim(current.name), id);
    }
    const next: Record<string, unknown> = { ...current };
    for (const [field, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      if (value === null) delete next[field];
      else next[field] = value;
    }
    next.updated_at = new Date().toISOString();
    const record = next as unknown as VirtualKeyRecord;
    await this.state.records.set(recordKey(id), record);
    await this.state.publish({ kind: 'virtual-key', id });
    return record;
  }

  /** A new value for the key; the old one is refused from now on, on every instance. */
  async rotate(id: string): Promise<{ record: VirtualKeyRecord; key: string } | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    const { value, hash, hint } = newKeyValue();
    const record: VirtualKeyRecord = { ...current, key_hash: hash, key_hint: hint, updated_at: new Date().toISOString() };
    await this.state.records.set(hashKey(hash), id);
    await this.state.records.set(recordKey(id), record);
    await this.state.records.delete(hashKey(current.key_hash));
    await this.state.publish({ kind: 'virtual-key', id });
    return { record, key: value };
  }

  async delete(id: string): Promise<VirtualKeyRecord | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    await this.state.records.delete(hashKey(current.key_hash));
    await this.state.records.delete(recordKey(id));
    await this.state.removeFromSet(SET, id);
    await this.state.release(nameClaim(current.name), id);
    await this.state.publish({ kind: 'virtual-key', id });
    return current;
  }

  /** The record for a key value, from memory when possible; undefined for an unknown or deleted key. */
  async lookup(value: string): Promise<VirtualKeyRecord | undefined> {
    const hash = hashKeyValue(value);
    const now = Date.now();
    const cached = this.byHash.get(hash);
    if (cached && cached.until > now) return cached.record;
    const unknownUntil = this.unknown.get(hash);
    if (unknownUntil !== undefined && unknownUntil > now) return undefined;
    const generation = this.generation;
    const id = await this.state.records.get<string>(hashKey(hash));
    const record = id ? await this.get(id) : undefined;
    if (!record || record.key_hash !== hash) {
      if (this.unknown.size >= NEGATIVE_LIMIT) this.unknown.clear();
      this.unknown.set(hash, now + NEGATIVE_TTL_MS);
      return undefined;
    }
    if (generation === this.generation) {
      this.byHash.set(hash, { record, until: now + POSITIVE_TTL_MS });
      this.hashById.set(record.id, hash);
    }
    return record;
  }

  /**
   * The record of a key id, from memory when possible (a route target names its key by id); any
   * instance's change or deletion evicts it, like a lookup by value.
   */
  async lookupId(id: string): Promise<VirtualKeyRecord | undefined> {
    const now = Date.now();
    const cached = this.byIdCache.get(id);
    if (cached && cached.until > now) return cached.record;
    const generation = this.generation;
    const record = id.startsWith(VIRTUAL_KEY_ID_PREFIX) ? await this.get(id) : undefined;
    if (generation === this.generation) {
      if (this.byIdCache.size >= NEGATIVE_LIMIT) this.byIdCache.clear();
      this.byIdCache.set(id, { record, until: now + (record ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS) });
    }
    return record;
  }

  /** The cached record of a key id (set by a lookup on this request's path). */
  cached(id: string): VirtualKeyRecord | undefined {
    const hash = this.hashById.get(id);
    return hash === undefined ? undefined : this.byHash.get(hash)?.record;
  }

  /** True when `value` is a current key (the admin guard answers such keys with 403). */
  async isKey(value: string): Promise<boolean> {
    return value.startsWith(VIRTUAL_KEY_PREFIX) && (await this.lookup(value)) !== undefined;
  }

  private evict(id: string): void {
    this.generation += 1;
    const readById = this.byIdCache.get(id)?.record;
    this.byIdCache.delete(id);
    if (readById) this.onEvict(readById);
    const hash = this.hashById.get(id);
    if (hash === undefined) return;
    const cached = this.byHash.get(hash);
    if (cached) this.onEvict(cached.record);
    this.byHash.delete(hash);
    this.hashById.delete(id);
  }
}
