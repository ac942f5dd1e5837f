import { DEFAULT_TEAM, type McpGrant } from '../org/records.js';
import type { SealedSecret } from './crypto.js';
import type { PriorityClass, ProviderQuota } from '../quota/settings.js';

import type { VirtualKeyLimits } from '../org/limits.js';

export type { LevelLimits, VirtualKeyLimits } from '../org/limits.js';

/** MCP grants (docs/mcp.md): a team holds them too, so they are declared with the team (core/org/records.ts). */
export type { McpGrant, McpServerGrant } from '../org/records.js';

/** A virtual key as stored: never the value, only its SHA-256 and a masked hint. */
export interface VirtualKeyRecord {
  readonly id: string;
  readonly name: string;
  /** Provider plugin id; absent on a key that names a route instead, or on an MCP-only key. */
  readonly provider?: string;
  /** The stored credential the provider is called with; absent on a key that names a route. */
  readonly credential_id?: string;
  /** A stored route's id: the key's requests take that route instead of one provider. */
  readonly route?: string;
  /**
   * Other routes the key may name in `x-gateway-config`: stored routes by id, config routes by
   * name. Its own `route` and model aliases need no grant; any other route is 403 `route_not_allowed`.
   */
  readonly allowed_routes?: readonly string[];
  /** A privately hosted endpoint's base URL, used instead of the provider's own. */
  readonly custom_host?: string;
  readonly guardrail_policy?: string;
  /** MCP servers and tools the key may use through `/mcp`; a key with a grant needs no provider. */
  readonly mcp?: McpGrant;
  readonly limits?: VirtualKeyLimits;
  /** ISO time after which the key is refused. */
  readonly expires_at?: string;
  /**
   * False keeps this key's request and response bodies out of the request log, whatever the
   * global setting (which still wins when it is off). Absent in records stored before the field: true.
   */
  readonly log_bodies?: boolean;
  /** The team that owns the key (absent: the `default` team, for keys stored before teams; null: the organization). */
  readonly team_id?: string | null;
  /** The user the key belongs to, within its team. */
  readonly user_id?: string;
  /** The service account the key belongs to, within its team. */
  readonly service_account_id?: string;
  /** Its requests' class in a provider quota's queue (absent: `interactive`; docs/virtual-keys.md). */
  readonly priority?: PriorityClass;
  readonly created_at: string;
  readonly updated_at: string;
  readonly key_hash: string;
  /** e.g. `vk-…a1b2`: enough to recognise a key, useless to use it. */
  readonly key_hint: string;
}

/** A stored provider credential: metadata in clear, the secret sealed by the vault. */
export interface CredentialRecord {
  readonly id: string;
  readonly name: string;
  /** Provider plugin id it is meant for (informative). */
  readonly provider?: string;
  readonly has_api_key: boolean;
  /** Names of the structured fields (values are sealed). */
  readonly field_names: readonly string[];
  /** Set when the credential was created from a virtual key's `provider_key`: deleted with that key. */
  readonly owner_key_id?: string;
  readonly created_at: string;
  /** When the secret was last replaced (`POST /admin/credentials/:id/rotate`); absent before any rotation. */
  readonly rotated_at?: string;
  /** The team that owns it (absent: the `default` team, for credentials stored before teams; null: the organization, shared). */
  readonly team_id?: string | null;
  /** The provider account's own limits, shared fairly between teams (docs/limits.md). */
  readonly quota?: ProviderQuota;
  readonly sealed: SealedSecret;
}

/** The plaintext inside a credential's seal. */
export interface CredentialSecret {
  readonly api_key?: string;
  readonly fields?: Readonly<Record<string, string>>;
}

/** What the admin API shows of a virtual key (`log_bodies` always present, true by default). */
export function publicVirtualKey(record: VirtualKeyRecord): Omit<VirtualKeyRecord, 'key_hash'> & { readonly log_bodies: boolean; readonly team_id: string | null } {
  const { key_hash: _hash, ...shown } = record;
  return { ...shown, log_bodies: record.log_bodies ?? true, team_id: record.team_id === undefined ? DEFAULT_TEAM : record.team_id };
}

/** What the admin API shows of a credential. */
export function publicCredential(record: CredentialRecord): Omit<CredentialRecord, 'sealed'> & { readonly team_id: string | null } {
  const { sealed: _sealed, ...shown } = record;
  return { ...shown, team_id: record.team_id === undefined ? DEFAULT_TEAM : record.team_id };
}
