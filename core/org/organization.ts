import { createHash, timingSafeEqual } from 'node:crypto';
import { type OrganizationStore, TOKEN_PREFIX } from './store.js';
import { errors } from '../errors.js';
import type { KeyResolver } from '../spec/key-resolver.js';
import { SecondCache, TeamDirectory } from './team-directory.js';
import type { ServiceAccountRecord, UserRecord } from './records.js';
import type { LevelLimits } from './limits.js';
import type { GroupRule, JwtRule } from './rules.js';

/** The organization's settings, as the configuration resolves them. */
export interface OrganizationSettings {
  readonly accountKey: 'enabled' | 'disabled';
  readonly groupRules: readonly GroupRule[];
  readonly jwtRules: readonly JwtRule[];
  readonly invitationTtlMs: number;
  /** The SCIM bearer token (`GATEWAY_SCIM_TOKEN`); absent: SCIM only with an admin credential. */
  readonly scimToken?: string;
}

/** How long "an active owner exists" is remembered (a suspension is seen within this). */
const OWNER_CHECK_MS = 1_000;

/**
 * The organization subsystem: its store, its settings, and the one question the admin guard and
 * the dashboard ask on every account-key sign-in (is the account key disabled?).
 */
export class Organization {
  /** Teams for the request path, kept a second. */
  readonly teams: TeamDirectory;
  /** Users, service accounts and the organization's limits for the request path (their limits), kept a second. */
  readonly users: SecondCache<UserRecord | undefined>;
  readonly serviceAccounts: SecondCache<ServiceAccountRecord | undefined>;
  private readonly limits: SecondCache<LevelLimits | undefined>;
  /**
   * The auth stage's resolver for admin tokens (`gtok-…`): always 401, so a token sent to a
   * provider route is recognised as the gateway's (never forwarded upstream) and refused.
   */
  readonly adminTokenRefusal: KeyResolver = {
    prefix: TOKEN_PREFIX,
    resolve: () => Promise.reject(errors.authentication('Personal access tokens and service account tokens are for the admin API; call models with a virtual key.', { code: 'invalid_api_key' })),
  };
  private ownerCheck: { at: number; exists: Promise<boolean> } | undefined;
  private readyPromise: Promise<void> | undefined;

  constructor(
    readonly store: OrganizationStore,
    readonly settings: OrganizationSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.teams = new TeamDirectory((id) => store.team(id), now);
    this.users = new SecondCache((id) => store.user(id), now);
    this.serviceAccounts = new SecondCache((id) => store.serviceAccount(id), now);
    this.limits = new SecondCache(() => store.organizationLimits(), now);
  }

  /** The organization's limits, as the request path reads them (a change applies within a second everywhere). */
  organizationLimits = (): LevelLimits | undefined | Promise<LevelLimits | undefined> => this.limits.get('organization');

  /** Creates the `default` team on first use (the migration of data stored before teams: every object without a team belongs to it). */
  ready(): Promise<void> {
    this.readyPromise ??= this.store.ensureDefaultTeam().catch((error: unknown) => {
      this.readyPromise = undefined;
      throw error;
    });
    return this.readyPromise;
  }

  /** True for the SCIM bearer token (SHA-256 compared in constant time). */
  isScimToken = (value: string): boolean => {
    const token = this.settings.scimToken;
    if (token === undefined) return false;
    const digest = (text: string) => createHash('sha256').update(text).digest();
    return timingSafeEqual(digest(value), digest(token));
  };

  /** True when `auth.accountKey` is `disabled` and an active owner user exists (else the account key stays the way in). */
  accountKeyDisabled = async (): Promise<boolean> => {
    if (this.settings.accountKey !== 'disabled') return false;
    const now = this.now();
    if (!this.ownerCheck || now - this.ownerCheck.at >= OWNER_CHECK_MS) {
      this.ownerCheck = { at: now, exists: this.store.activeOwners().then((owners) => owners.length > 0) };
    }
    return this.ownerCheck.exists;
  };
}
