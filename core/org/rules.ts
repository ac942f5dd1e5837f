import { ORG_RANK, type OrgRole, TEAM_RANK, type TeamRole } from './permissions.js';

/** A rule giving a signed-in user's identity-provider group an organization role, or a role in a team (named by the team's name). */
export interface GroupRule {
  group: string;
  role?: OrgRole;
  team?: string;
  teamRole?: TeamRole;
}

/** A rule making a JWT caller whose claim equals a value act for a team (its policy and limits), taking `route` (a stored route's id or name). */
export interface JwtRule {
  claim: string;
  equals: string;
  team: string;
  route?: string;
}

/**
 * The roles a user's groups give by the rules: the highest organization role any matching rule
 * gives, and in each team the highest team role. Teams are named by name; a rule naming no team is
 * skipped (and reported by the caller).
 */
export function rolesFromGroups(
  groups: readonly string[],
  rules: readonly GroupRule[],
  teamIdOf: (name: string) => string | undefined,
): { role?: OrgRole; teams: Record<string, TeamRole>; unknownTeams: string[] } {
  const member = new Set(groups);
  let role: OrgRole | undefined;
  const teams: Record<string, TeamRole> = {};
  const unknownTeams: string[] = [];
  for (const rule of rules) {
    if (!member.has(rule.group)) continue;
    if (rule.role !== undefined && (role === undefined || ORG_RANK[rule.role] > ORG_RANK[role])) role = rule.role;
    if (rule.team !== undefined && rule.teamRole !== undefined) {
      const id = teamIdOf(rule.team);
      if (id === undefined) {
        unknownTeams.push(rule.team);
        continue;
      }
      const current = teams[id];
      if (current === undefined || TEAM_RANK[rule.teamRole] > TEAM_RANK[current]) teams[id] = rule.teamRole;
    }
  }
  return { ...(role !== undefined ? { role } : {}), teams, unknownTeams };
}
