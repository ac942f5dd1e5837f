// Who is signed in (`GET /admin/me`), what they may do, their teams and the team switcher's choice.
// Hiding what the caller may not do is a courtesy: the server refuses it regardless.
import { api } from './api.js';
import { field, h, notify, replace, select } from './dom.js';

let me = null;
let teams = [];
// The switcher's team, in memory only (the page writes nothing to storage): '' shows every team.
let chosenTeam = '';

/** Reads who is signed in and the teams they may see. */
export async function loadMe() {
  me = await api.get('/admin/me');
  teams = holdsAnywhere('teams.read') ? (await api.get('/admin/teams')).data : [];
  teams.sort((a, b) => a.name.localeCompare(b.name));
  if (chosenTeam && !teams.some((team) => team.id === chosenTeam)) chosenTeam = '';
  return me;
}

export function forgetMe() {
  me = null;
  teams = [];
  chosenTeam = '';
}

export const currentMe = () => me;

/** The signed-in user's id (undefined for the account key). */
export const myUserId = () => me?.user?.id;

/** The header's name for the caller: the user's email, or "account key". */
export function whoLabel() {
  if (!me) return '';
  if (me.user) return me.user.name ? `${me.user.name} (${me.user.email})` : me.user.email;
  if (me.service_account) return `service account ${me.service_account.name}`;
  return me.actor?.label ?? 'account key';
}

const teamPermissions = (team) => me?.teams?.find((entry) => entry.team_id === team)?.permissions ?? [];

/** Held in every team (an organization role, or the account key). */
export const holdsEverywhere = (permission) => Boolean(me?.permissions?.includes(permission));

/** Held somewhere: in every team or in one. */
export const holdsAnywhere = (permission) => holdsEverywhere(permission) || Boolean(me?.teams?.some((entry) => entry.permissions.includes(permission)));

/** Held for objects of this team (null: the organization's shared objects, which only organization roles change). */
export const holdsIn = (permission, team) => holdsEverywhere(permission) || (team !== null && team !== undefined && teamPermissions(team).includes(permission));

/** Whether the caller may do this where the switcher points (anywhere when it shows every team). */
export const may = (permission) => (selectedTeam() ? holdsIn(permission, selectedTeam()) : holdsAnywhere(permission));

/** A user with no organization role and no team: nothing to show. */
export const hasNoAccess = () => Boolean(me) && (me.permissions?.length ?? 0) === 0 && (me.teams?.length ?? 0) === 0;

/** The caller's role in a team, if any. */
export const roleIn = (team) => me?.teams?.find((entry) => entry.team_id === team)?.role ?? null;

export const teamList = () => teams;

/** The switcher's team id, or '' for every team. */
export function selectedTeam() {
  return chosenTeam;
}

/** The team an object belongs to as stored: no `team_id` is the `default` team, null the organization. */
export const teamOf = (object) => (object.team_id === undefined ? 'default' : object.team_id);

/** A team's name for a `team_id` (null: shared by the organization). */
export function teamName(teamId) {
  if (teamId === null) return 'Organization (shared)';
  const id = teamId === undefined ? 'default' : teamId;
  return teams.find((team) => team.id === id)?.name ?? id;
}

/** An object's team as a table cell's content. */
export const teamCell = (object) => h('span', { class: 'team-name', data: { teamId: teamOf(object) ?? 'organization' }, text: teamName(teamOf(object)) });

/**
 * The switcher's filter: every object when it shows every team, else the team's objects and the
 * organization's shared ones (which the team's keys may use too).
 */
export function inSelectedTeam(object) {
  const team = selectedTeam();
  if (!team) return true;
  const owner = teamOf(object);
  return owner === team || owner === null;
}

/** The team switcher in the header: changing it re-renders the page. */
export function renderSwitcher(slot, onChange) {
  if (teams.length === 0) {
    replace(slot);
    slot.hidden = true;
    return;
  }
  slot.hidden = false;
  const control = select('team', [['', 'All teams'], ...teams.map((team) => [team.id, team.name])], selectedTeam());
  control.id = 'team-switcher';
  control.addEventListener('change', () => {
    chosenTeam = control.value;
    notify('');
    onChange();
  });
  replace(slot, h('label', { for: 'team-switcher', text: 'Viewing team' }), control);
}

/**
 * The Team field of a create form: the teams where the caller holds `permission` (the switcher's
 * first), and the organization (shared) for organization roles when `shared`. Null when there is
 * no choice to make (the server then uses the caller's only team).
 */
export function teamField(permission, { shared = false, hint } = {}) {
  const options = teams.filter((team) => holdsIn(permission, team.id)).map((team) => [team.id, team.name]);
  if (shared && holdsEverywhere(permission)) options.push(['organization', 'Organization (shared)']);
  if (options.length === 0) return null;
  const preferred = options.find(([id]) => id === selectedTeam())?.[0] ?? options[0][0];
  return field('Team', select('team_id', options, preferred), hint ?? 'who owns it');
}

/** The `team_id` a create form's Team field names (undefined: none shown). */
export function teamIdOf(data) {
  const value = data.get('team_id');
  if (value === null || value === '') return undefined;
  return value === 'organization' ? null : String(value);
}

/**
 * A value shown once (a token, an invitation link) with a copy button and the warning that it is
 * shown only now; gone when dismissed or on navigation.
 */
export function showOnce(slot, { title, value, label, warning }) {
  const input = h('input', { type: 'text', readonly: true, class: 'key-value once-value', 'aria-label': label, spellcheck: 'false' });
  input.value = value;
  const copy = h('button', { type: 'button', text: 'Copy' });
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(input.value);
      notify('Copied to the clipboard.');
    } catch {
      input.select();
      notify('Select and copy the value by hand (Ctrl+C).', 'error');
    }
  });
  const done = h('button', { type: 'button', class: 'secondary', text: 'I have saved it' });
  const panel = h('section', { class: 'once', 'aria-labelledby': 'once-title' },
    h('h2', { id: 'once-title', text: title }),
    h('p', { class: 'once-warning', text: warning ?? 'This is the only time it is shown. Store it now; it cannot be read back.' }),
    h('div', { class: 'inline' }, input, copy, done));
  done.addEventListener('click', () => replace(slot));
  replace(slot, panel);
  input.focus();
  input.select();
}

/** Shows an API error in the live region; answers undefined (for `.catch(failed)`). */
export function failed(error) {
  notify(error.message, 'error');
  return undefined;
}

/**
 * The registered plugins (`GET /admin/plugins`), or for a caller who may not list them (a team
 * role), the providers it can use: those of the credentials it sees and its teams' allowed lists.
 */
export async function pluginsFor(credentials) {
  if (holdsAnywhere('plugins.read')) return api.get('/admin/plugins');
  const ids = new Set(credentials.map((credential) => credential.provider).filter(Boolean));
  for (const team of teams) for (const provider of team.allowed_providers ?? []) ids.add(provider);
  return { providers: [...ids].sort().map((id) => ({ id, name: id })) };
}
