import { errors } from '../errors.js';
import type { TeamRecord } from '../org/records.js';
import { modelAllowed } from '../org/team-directory.js';
import type { VirtualKeyRecord } from './records.js';

/** A team by id, synchronously when it is cached (core/org's TeamDirectory). */
export type TeamLookup = (id: string) => TeamRecord | undefined | Promise<TeamRecord | undefined>;

/** The team a key belongs to, when it belongs to one (keys stored before teams: the `default` team, which restricts nothing unless given lists). */
export const teamIdOf = (record: VirtualKeyRecord): string | undefined => (record.team_id === null ? undefined : (record.team_id ?? 'default'));

/**
 * 403 unless the request's model and provider are among the key's team's allowed ones (when the
 * team restricts them): a team's lists bound every key of the team, whatever the key's own say.
 */
export function checkTeamAccess(team: TeamRecord | undefined, model: string | undefined, provider: string | undefined): void {
  if (!team) return;
  if (team.allowed_models && (model === undefined || !modelAllowed(model, team.allowed_models))) {
    throw errors.permission(model === undefined ? `Team ${team.name} is limited to certain models, and this request names none the gateway can check.` : `Team ${team.name} may not use the model "${model}".`, {
      param: 'model',
      code: 'model_not_allowed',
    });
  }
  if (team.allowed_providers && provider !== undefined && !team.allowed_providers.includes(provider)) {
    throw errors.permission(`Team ${team.name} may not use the provider "${provider}".`, { code: 'provider_not_allowed' });
  }
}
