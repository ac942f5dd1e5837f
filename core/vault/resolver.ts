import { errors } from '../errors.js';
import type { TargetCredentials } from '../routing/sources.js';
import type { KeyResolution, KeyResolutionContext, KeyResolver } from '../spec/key-resolver.js';
import type { GatewayContext } from '../pipeline/context.js';
import type { Credentials } from './credentials.js';
import { VaultTamperedError } from './vault.js';
import type { ProviderCredentials } from '../spec/provider.js';
import type { VirtualKeyRecord } from './records.js';
import { type TeamLookup, teamIdOf } from './team-access.js';
import { VIRTUAL_KEY_ID_PREFIX, VIRTUAL_KEY_PREFIX, type VirtualKeys } from './virtual-keys.js';

/** The vault's resolver: a {@link KeyResolver} that can also resolve a record already read (a route target's key, by id). */
export interface VirtualKeyResolver extends KeyResolver {
  resolveRecord(record: VirtualKeyRecord, context: KeyResolutionContext): Promise<KeyResolution>;
}

/**
 * The auth stage's resolver for virtual keys: the key's record (from memory in the common case),
 * its decrypted credential (cached briefly), provider, custom host and guardrail policy; a key with
 * `log_bodies: false` marks the request so that its bodies stay out of the log.
 */
export function virtualKeyResolver(parts: { keys: () => VirtualKeys; credentials: () => Credentials; teams?: TeamLookup }): VirtualKeyResolver {
  /**
   * Each key record's resolution, kept while the record (cached by the lookup) and its opened
   * credential stay the same objects: nothing reads a resolution but to copy from it, so a request
   * needs no new one (issue 21).
   */
  const resolutions = new WeakMap<VirtualKeyRecord, KeyResolution>();
  const resolveRecord = async (record: VirtualKeyRecord, context: KeyResolutionContext): Promise<KeyResolution> => {
    if (record.log_bodies === false) context.key = { logBodies: false };
    if (record.expires_at !== undefined && Date.parse(record.expires_at) <= Date.now()) {
      throw errors.authentication('This virtual key has expired.', { code: 'virtual_key_expired' });
    }
    // A key without a policy of its own takes its team's default policy.
    const teamId = record.guardrail_policy || !parts.teams ? undefined : teamIdOf(record);
    const teamPolicy = teamId === undefined ? undefined : (await parts.teams!(teamId))?.guardrail_policy;
    const policy = record.guardrail_policy || teamPolicy;
    if (record.route !== undefined) {
      let routed = resolutions.get(record);
      if (routed === undefined || routed.policy !== policy) resolutions.set(record, (routed = resolutionOf(record, undefined, policy)));
      return routed;
    }
    if (record.provider === undefined) {
      throw errors.permission('This virtual key is granted MCP servers only (the /mcp endpoint); it names no provider or route.', { code: 'mcp_only_key' });
    }
    let credentials;
    try {
      credentials = record.credential_id === undefined ? undefined : await parts.credentials().open(record.credential_id);
    } catch (error) {
      if (error instanceof VaultTamperedError) {
        throw errors.internal("This key's stored credential failed its integrity check and was not used.", { code: 'credential_tampered' });
      }
      throw error;
    }
    if (!credentials) {
      throw errors.authentication("This virtual key's provider credential was deleted.", { code: 'credential_missing' });
    }
    let resolution = resolutions.get(record);
    if (resolution?.credentials !== credentials || resolution.policy !== policy) resolutions.set(record, (resolution = resolutionOf(record, credentials, policy)));
    return resolution;
  };
  return {
    prefix: VIRTUAL_KEY_PREFIX,
    async resolve(value, context) {
      const record = await parts.keys().lookup(value);
      return record ? resolveRecord(record, context) : undefined;
    },
    resolveRecord,
  };
}

/** A key's resolution: its route, or its provider, custom host and opened credential; its policy and granted routes. */
function resolutionOf(record: VirtualKeyRecord, credentials: ProviderCredentials | undefined, policy: string | undefined): KeyResolution {
  const resolution: { -readonly [Field in keyof KeyResolution]: KeyResolution[Field] } = { caller: { type: 'virtual-key', id: record.id, name: record.name } };
  if (record.route !== undefined) resolution.route = record.route;
  else {
    resolution.provider = record.provider;
    if (record.custom_host) resolution.customHost = record.custom_host;
    resolution.credentials = credentials;
  }
  if (policy) resolution.policy = policy;
  if (record.allowed_routes !== undefined && record.allowed_routes.length > 0) resolution.allowedRoutes = record.allowed_routes;
  return Object.freeze(resolution);
}

/**
 * What a route's targets name, opened for the route executor: a stored credential by id (decrypted
 * by the vault worker, cached like a key's) and a virtual key's binding by reference: its id
 * (`vk_…`, what stored routes hold) or its value (`vk-…`, which a config file or an account key's
 * inline route may give).
 */
export function targetCredentials(resolver: VirtualKeyResolver, parts: { keys: () => VirtualKeys; credentials: () => Credentials }): TargetCredentials {
  return {
    async credential(id) {
      try {
        return await parts.credentials().open(id);
      } catch (error) {
        if (error instanceof VaultTamperedError) {
          throw errors.internal("A route target's stored credential failed its integrity check and was not used.", { code: 'credential_tampered' });
        }
        throw error;
      }
    },
    async virtualKey(reference): Promise<KeyResolution | undefined> {
      // The resolver writes only the key's log setting into `context.key`; a target's key does not change the request's.
      const scratch = {} as GatewayContext;
      if (reference.startsWith(VIRTUAL_KEY_ID_PREFIX)) {
        const record = await parts.keys().lookupId(reference);
        return record ? resolver.resolveRecord(record, scratch) : undefined;
      }
      if (!reference.startsWith(VIRTUAL_KEY_PREFIX)) return undefined;
      return resolver.resolve(reference, scratch);
    },
  };
}
