import type { SignInHandler } from '../identity/oidc.js';
import type { ClaimsMapper } from '../identity/jwt.js';
import type { KeyResolution } from '../spec/key-resolver.js';
import type { Organization } from './organization.js';
import { ORG_RANK, TEAM_RANK, type TeamRole } from './permissions.js';
import { rolesFromGroups } from './rules.js';
import type { ServiceAccountRecord } from './records.js';
import { SecondCache } from './team-directory.js';

/** Told of every single sign-on's outcome (the audit trail). */
export type SignInRecorder = (event: { user?: { id: string; email: string }; outcome: 'success' | 'denied'; email: string; provider: string }) => void;

/**
 * Who a verified single sign-on is: the user with that verified email (an invited one becomes
 * active), or a new user when the group rules give the email a role; else "no access". The rules
 * only raise roles at each sign-in (a role an admin granted by hand stays; removing people is SCIM's
 * or an admin's job). A suspended user is refused.
 */
export function organizationSignIn(organization: Organization, record: SignInRecorder = () => {}): SignInHandler {
  const { store, settings } = organization;
  return async (identity) => {
    const refuse = (refused: string) => {
      record({ outcome: 'denied', email: identity.email, provider: identity.provider });
      return { refused };
    };
    if (!identity.emailVerified || identity.email === '') return refuse('Your identity provider did not vouch for your email address, so you cannot be matched to a user.');
    await organization.ready();
    const teams = await store.teams();
    const granted = rolesFromGroups(identity.groups, settings.groupRules, (name) => teams.find((team) => team.name.toLowerCase() === name.toLowerCase())?.id);
    const now = new Date().toISOString();
    let user = await store.userByEmail(identity.email);
    if (user?.status === 'suspended') return refuse('Your user is suspended on this gateway. Ask an administrator.');
    if (!user) {
      if (granted.role === undefined && Object.keys(granted.teams).length === 0) {
        return refuse('You have no access to this gateway yet: ask an administrator to invite you, or to give your group a role.');
      }
      user = await store.createUser({
        email: identity.email,
        ...(identity.name ? { name: identity.name } : {}),
        ...(granted.role ? { role: granted.role } : {}),
        teams: granted.teams,
        status: 'active',
        source: 'sso',
        sso_subject: `${identity.issuer}|${identity.subject}`,
      });
    } else {
      const role = granted.role !== undefined && (user.role === undefined || ORG_RANK[granted.role] > ORG_RANK[user.role]) ? granted.role : user.role;
      const merged: Record<string, TeamRole> = { ...user.teams };
      for (const [team, teamRole] of Object.entries(granted.teams)) if (merged[team] === undefined || TEAM_RANK[teamRole] > TEAM_RANK[merged[team]!]) merged[team] = teamRole;
      user = (await store.updateUser(user.id, { status: 'active', role: role ?? null, teams: merged, sso_subject: `${identity.issuer}|${identity.subject}`, last_sign_in_at: now, ...(user.name === undefined && identity.name ? { name: identity.name } : {}) }))!;
    }
    record({ outcome: 'success', user: { id: user.id, email: user.email }, email: user.email, provider: identity.provider });
    return { principal: user.id };
  };
}

/**
 * Who a verified JWT is: the service account whose `jwt_subject` is the token's `sub` (its team's
 * policy and allowed routes, its route), else the first `organization.jwtRules` entry whose claim
 * equals its value (that team's, with the rule's route). Nothing maps: undefined (401 `jwt_not_mapped`).
 */
export function organizationClaims(organization: Organization, routeId: (idOrName: string) => Promise<string | undefined>, now: () => number = Date.now): ClaimsMapper {
  const { store, settings } = organization;
  // A subject's service account, kept a second (as teams are): a change applies within a second.
  const accounts = new SecondCache<ServiceAccountRecord | undefined>((subject) => store.serviceAccountBySubject(subject), now);
  return async (claims) => {
    const subject = typeof claims.sub === 'string' ? claims.sub : undefined;
    const account = subject === undefined ? undefined : await accounts.get(subject);
    if (account) {
      const team = await organization.teams.get(account.team_id);
      return resolutionOf({ type: 'service-account', id: account.id, name: account.name, team: account.team_id }, team, account.route);
    }
    for (const rule of settings.jwtRules) {
      if (String(claims[rule.claim] ?? '') !== rule.equals) continue;
      const team = (await store.teams()).find((candidate) => candidate.name.toLowerCase() === rule.team.toLowerCase());
      if (!team) continue;
      const route = rule.route === undefined ? undefined : await routeId(rule.route);
      return resolutionOf({ type: 'service-account', id: `jwt:${team.id}:${subject ?? 'unknown'}`, name: `${rule.claim}=${rule.equals}`, team: team.id }, team, route);
    }
    return undefined;
  };
}

function resolutionOf(caller: Extract<KeyResolution['caller'], { type: 'service-account' }>, team: { guardrail_policy?: string; allowed_routes?: readonly string[] } | undefined, route: string | undefined): KeyResolution {
  return {
    caller,
    ...(route !== undefined ? { route } : {}),
    ...(team?.guardrail_policy ? { policy: team.guardrail_policy } : {}),
    ...(team?.allowed_routes?.length ? { allowedRoutes: team.allowed_routes } : {}),
  };
}
