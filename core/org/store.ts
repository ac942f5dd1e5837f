import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { SharedState } from '../store/state.js';
import type { OrgRole, Permission, TeamRole } from './permissions.js';
import { DEFAULT_TEAM, type ServiceAccountRecord, type TeamRecord, type TokenRecord, type UserRecord } from './records.js';
import type { LevelLimits } from './limits.js';

/** The prefix of personal access tokens and service-account tokens. */
export const TOKEN_PREFIX = 'gtok-';

const TEAMS = 'org:teams';
const USERS = 'org:users';
const SERVICE_ACCOUNTS = 'org:service-accounts';
const TOKENS = 'org:tokens';
const teamKey = (id: string) => `org:team:${id}`;
const userKey = (id: string) => `org:user:${id}`;
const serviceAccountKey = (id: string) => `org:service-account:${id}`;
const tokenKey = (id: string) => `org:token:${id}`;
/** The organization's own settings kept in the store (its limits). */
const ORGANIZATION = 'org:organization';
const tokenHashKey = (hash: string) => `org:token-hash:${hash}`;
const invitationKey = (hash: string) => `org:invitation:${hash}`;
const emailClaim = (email: string) => `org:email:${email}`;
const teamNameClaim = (name: string) => `org:team-name:${name.toLowerCase()}`;
const subjectClaim = (subject: string) => `org:jwt-subject:${subject}`;
const serviceAccountNameClaim = (team: string, name: string) => `org:service-account-name:${team}:${name.toLowerCase()}`;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const newId = (prefix: string) => `${prefix}_${randomUUID().replaceAll('-', '')}`;
const nowIso = () => new Date().toISOString();

/** A unique field (an email, a team's name) another record holds. */
export class TakenError extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

export type TeamInput = Omit<TeamRecord, 'id' | 'created_at' | 'updated_at'>;
export type ServiceAccountInput = Omit<ServiceAccountRecord, 'id' | 'created_at' | 'updated_at'>;

/** Applies a patch: `undefined` keeps a field, `null` removes it. */
function patched<T extends object>(current: T, patch: Record<string, unknown>): T {
  const next: Record<string, unknown> = { ...(current as Record<string, unknown>) };
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete next[field];
    else next[field] = value;
  }
  next.updated_at = nowIso();
  return next as unknown as T;
}

/**
 * Teams, users, service accounts, tokens and invitations, kept in the shared state (the embedded
 * SQLite file, or Redis shared by every instance). Nothing is cached: a suspension, a role taken
 * or a token revoked is seen by the next admin call on every instance.
 */
export class OrganizationStore {
  constructor(private readonly state: () => SharedState) {}

  // Teams

  /** Creates the `default` team unless it exists (the migration of data stored before teams). */
  /** The organization's limits (`PATCH /admin/organization`); undefined when none are set. */
  async organizationLimits(): Promise<LevelLimits | undefined> {
    return ((await this.state().records.get(ORGANIZATION)) as { limits?: LevelLimits } | undefined)?.limits;
  }

  /** Sets (or, with null, removes) the organization's limits. */
  async setOrganizationLimits(limits: LevelLimits | null): Promise<void> {
    await this.state().records.set(ORGANIZATION, limits === null ? {} : { limits, updated_at: nowIso() });
  }

  async ensureDefaultTeam(): Promise<void> {
    if (await this.team(DEFAULT_TEAM)) return;
    if (!(await this.state().claim(teamNameClaim('default'), DEFAULT_TEAM))) return;
    const now = nowIso();
    const record: TeamRecord = { id: DEFAULT_TEAM, name: 'default', description: 'Everything stored before teams existed.', created_at: now, updated_at: now };
    await this.state().records.set(teamKey(DEFAULT_TEAM), record);
    await this.state().addToSet(TEAMS, DEFAULT_TEAM);
  }

  async createTeam(input: TeamInput): Promise<TeamRecord> {
    const id = newId('team');
    if (!(await this.state().claim(teamNameClaim(input.name), id))) throw new TakenError('name', `A team named "${input.name}" exists.`);
    const now = nowIso();
    const record: TeamRecord = { ...input, id, created_at: now, updated_at: now };
    await this.state().records.set(teamKey(id), record);
    await this.state().addToSet(TEAMS, id);
    return record;
  }

  async team(id: string): Promise<TeamRecord | undefined> {
    return (await this.state().records.get<TeamRecord>(teamKey(id))) ?? undefined;
  }

  async teams(): Promise<TeamRecord[]> {
    const all = await Promise.all((await this.state().members(TEAMS)).map((id) => this.team(id)));
    return all.filter((team): team is TeamRecord => team !== undefined).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  async updateTeam(id: string, patch: Record<string, unknown>): Promise<TeamRecord | undefined> {
    const current = await this.team(id);
    if (!current) return undefined;
    if (typeof patch.name === 'string' && patch.name.toLowerCase() !== current.name.toLowerCase()) {
      if (!(await this.state().claim(teamNameClaim(patch.name), id))) throw new TakenError('name', `A team named "${patch.name}" exists.`);
      await this.state().release(teamNameClaim(current.name), id);
    }
    const next = patched(current, patch);
    await this.state().records.set(teamKey(id), next);
    // Its keys' open MCP sessions, on every instance, are told to list their tools again.
    if ('mcp' in patch) await this.state().publish({ kind: 'team', id });
    return next;
  }

  async deleteTeam(id: string): Promise<TeamRecord | undefined> {
    const current = await this.team(id);
    if (!current) return undefined;
    await this.state().records.delete(teamKey(id));
    await this.state().removeFromSet(TEAMS, id);
    await this.state().release(teamNameClaim(current.name), id);
    if (current.mcp !== undefined) await this.state().publish({ kind: 'team', id });
    return current;
  }

  // Users

  async createUser(input: {
    email: string;
    name?: string;
    role?: OrgRole;
    status: UserRecord['status'];
    source: UserRecord['source'];
    teams?: Record<string, TeamRole>;
    sso_subject?: string;
    external_id?: string;
    limits?: LevelLimits;
  }): Promise<UserRecord> {
    const id = newId('user');
    const email = input.email.toLowerCase();
    if (!(await this.state().claim(emailClaim(email), id))) throw new TakenError('email', `A user with the email ${email} exists.`);
    const now = nowIso();
    const record: UserRecord = {
      id,
      email,
      ...(input.name !== undefined ? { name: input.name } : {}),
      status: input.status,
      ...(input.role !== undefined ? { role: input.role } : {}),
      teams: input.teams ?? {},
      source: input.source,
      ...(input.sso_subject !== undefined ? { sso_subject: input.sso_subject } : {}),
      ...(input.external_id !== undefined ? { external_id: input.external_id } : {}),
      ...(input.limits !== undefined ? { limits: input.limits } : {}),
      created_at: now,
      updated_at: now,
    };
    await this.state().records.set(userKey(id), record);
    await this.state().addToSet(USERS, id);
    return record;
  }

  async user(id: string): Promise<UserRecord | undefined> {
    return (await this.state().records.get<UserRecord>(userKey(id))) ?? undefined;
  }

  async userByEmail(email: string): Promise<UserRecord | undefined> {
    const users = await this.users();
    return users.find((user) => user.email === email.toLowerCase());
  }

  async users(): Promise<UserRecord[]> {
    const all = await Promise.all((await this.state().members(USERS)).map((id) => this.user(id)));
    return all.filter((user): user is UserRecord => user !== undefined).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  async updateUser(id: string, patch: Record<string, unknown>): Promise<UserRecord | undefined> {
    const current = await this.user(id);
    if (!current) return undefined;
    const next = patched(current, patch);
    await this.state().records.set(userKey(id), next);
    return next;
  }

  /** Removes a user, their tokens and their email claim (SCIM deprovisioning). */
  async deleteUser(id: string): Promise<UserRecord | undefined> {
    const current = await this.user(id);
    if (!current) return undefined;
    for (const token of await this.tokens({ type: 'user', id })) await this.revokeToken(token.id);
    await this.state().records.delete(userKey(id));
    await this.state().removeFromSet(USERS, id);
    await this.state().release(emailClaim(current.email), id);
    return current;
  }

  /** Changes a user's email (a SCIM rename), keeping it unique. */
  async changeEmail(id: string, email: string): Promise<void> {
    const current = await this.user(id);
    const next = email.toLowerCase();
    if (!current || current.email === next) return;
    if (!(await this.state().claim(emailClaim(next), id))) throw new TakenError('email', `A user with the email ${next} exists.`);
    await this.state().release(emailClaim(current.email), id);
    await this.state().records.set(userKey(id), { ...current, email: next, updated_at: nowIso() });
  }

  /** Users holding the owner role and active. */
  async activeOwners(): Promise<UserRecord[]> {
    return (await this.users()).filter((user) => user.role === 'owner' && user.status === 'active');
  }

  // Service accounts

  async createServiceAccount(input: ServiceAccountInput): Promise<ServiceAccountRecord> {
    const id = newId('sa');
    if (!(await this.state().claim(serviceAccountNameClaim(input.team_id, input.name), id))) throw new TakenError('name', `The team has a service account named "${input.name}".`);
    if (input.jwt_subject !== undefined && !(await this.state().claim(subjectClaim(input.jwt_subject), id))) {
      await this.state().release(serviceAccountNameClaim(input.team_id, input.name), id);
      throw new TakenError('jwt_subject', 'Another service account has this jwt_subject.');
    }
    const now = nowIso();
    const record: ServiceAccountRecord = { ...input, id, created_at: now, updated_at: now };
    await this.state().records.set(serviceAccountKey(id), record);
    await this.state().addToSet(SERVICE_ACCOUNTS, id);
    return record;
  }

  async serviceAccount(id: string): Promise<ServiceAccountRecord | undefined> {
    return (await this.state().records.get<ServiceAccountRecord>(serviceAccountKey(id))) ?? undefined;
  }

  async serviceAccounts(): Promise<ServiceAccountRecord[]> {
    const all = await Promise.all((await this.state().members(SERVICE_ACCOUNTS)).map((id) => this.serviceAccount(id)));
    return all.filter((account): account is ServiceAccountRecord => account !== undefined).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  async serviceAccountBySubject(subject: string): Promise<ServiceAccountRecord | undefined> {
    return (await this.serviceAccounts()).find((account) => account.jwt_subject === subject);
  }

  async updateServiceAccount(id: string, patch: Record<string, unknown>): Promise<ServiceAccountRecord | undefined> {
    const current = await this.serviceAccount(id);
    if (!current) return undefined;
    if (typeof patch.name === 'string' && patch.name.toLowerCase() !== current.name.toLowerCase()) {
      if (!(await this.state().claim(serviceAccountNameClaim(current.team_id, patch.name), id))) throw new TakenError('name', `The team has a service account named "${patch.name}".`);
      await this.state().release(serviceAccountNameClaim(current.team_id, current.name), id);
    }
    if (patch.jwt_subject !== undefined && patch.jwt_subject !== current.jwt_subject) {
      if (typeof patch.jwt_subject === 'string' && !(await this.state().claim(subjectClaim(patch.jwt_subject), id))) throw new TakenError('jwt_subject', 'Another service account has this jwt_subject.');
      if (current.jwt_subject !== undefined) await this.state().release(subjectClaim(current.jwt_subject), id);
    }
    const next = patched(current, patch);
    await this.state().records.set(serviceAccountKey(id), next);
    return next;
  }

  async deleteServiceAccount(id: string): Promise<ServiceAccountRecord | undefined> {
    const current = await this.serviceAccount(id);
    if (!current) return undefined;
    for (const token of await this.tokens({ type: 'service-account', id })) await this.revokeToken(token.id);
    await this.state().records.delete(serviceAccountKey(id));
    await this.state().removeFromSet(SERVICE_ACCOUNTS, id);
    await this.state().release(serviceAccountNameClaim(current.team_id, current.name), id);
    if (current.jwt_subject !== undefined) await this.state().release(subjectClaim(current.jwt_subject), id);
    return current;
  }

  // Tokens

  /** A new token; its value is returned once and stored only as its SHA-256. */
  async createToken(input: { name: string; owner: TokenRecord['owner']; permissions?: readonly Permission[]; expiresAt?: string }): Promise<{ record: TokenRecord; token: string }> {
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const record: TokenRecord = {
      id: newId('tok'),
      name: input.name,
      owner: input.owner,
      ...(input.permissions !== undefined ? { permissions: input.permissions } : {}),
      ...(input.expiresAt !== undefined ? { expires_at: input.expiresAt } : {}),
      created_at: nowIso(),
      token_hash: sha256(token),
      token_hint: `${TOKEN_PREFIX}…${token.slice(-4)}`,
    };
    await this.state().records.set(tokenHashKey(record.token_hash), record.id);
    await this.state().records.set(tokenKey(record.id), record);
    await this.state().addToSet(TOKENS, record.id);
    return { record, token };
  }

  async token(id: string): Promise<TokenRecord | undefined> {
    return (await this.state().records.get<TokenRecord>(tokenKey(id))) ?? undefined;
  }

  /** The token a value is, if any (expiry is the caller's to check). */
  async tokenByValue(value: string): Promise<TokenRecord | undefined> {
    const id = await this.state().records.get<string>(tokenHashKey(sha256(value)));
    return id ? this.token(id) : undefined;
  }

  /** Tokens, all or one owner's. */
  async tokens(owner?: TokenRecord['owner']): Promise<TokenRecord[]> {
    const all = await Promise.all((await this.state().members(TOKENS)).map((id) => this.token(id)));
    return all
      .filter((token): token is TokenRecord => token !== undefined && (owner === undefined || (token.owner.type === owner.type && token.owner.id === owner.id)))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  async revokeToken(id: string): Promise<TokenRecord | undefined> {
    const current = await this.token(id);
    if (!current) return undefined;
    await this.state().records.delete(tokenHashKey(current.token_hash));
    await this.state().records.delete(tokenKey(id));
    await this.state().removeFromSet(TOKENS, id);
    return current;
  }

  /** Records a token's use (at most once a minute per token: admin calls are not slowed by writes); true when it did. */
  async touchToken(token: TokenRecord, now = Date.now()): Promise<boolean> {
    if (token.last_used_at !== undefined && now - Date.parse(token.last_used_at) < 60_000) return false;
    const current = await this.token(token.id);
    if (!current) return false;
    await this.state().records.set(tokenKey(token.id), { ...current, last_used_at: new Date(now).toISOString() });
    return true;
  }

  // Invitations

  /** A one-time invitation for a user; the value goes in the link, only its hash is stored. */
  async invite(userId: string, ttlMs: number): Promise<{ token: string; expiresAt: string }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + ttlMs).toISOString();
    await this.state().records.set(invitationKey(sha256(token)), { user_id: userId, expires_at: expiresAt }, ttlMs);
    return { token, expiresAt };
  }

  /** The user an invitation is for, once: the invitation is deleted whether or not it was still valid. */
  async redeemInvitation(token: string): Promise<string | undefined> {
    const key = invitationKey(sha256(token));
    const invitation = await this.state().records.get<{ user_id: string; expires_at: string }>(key);
    if (!invitation) return undefined;
    // Only the caller that deletes it redeems it (two concurrent redemptions: one wins).
    if (!(await this.state().records.delete(key))) return undefined;
    return Date.parse(invitation.expires_at) > Date.now() ? invitation.user_id : undefined;
  }
}
