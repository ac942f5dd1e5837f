// The organization's pages: teams, a team's members, users. Actions the caller's permissions do
// not allow are not shown (the server refuses them regardless).
import { api } from './api.js';
import { field, format, h, notify, replace, select } from './dom.js';
import { limitsForm, limitsPanel, limitsSummary } from './limits.js';
import { failed, holdsEverywhere, holdsIn, loadMe, myUserId, roleIn, selectedTeam, showOnce, teamList, teamName } from './session.js';

const TEAM_ROLES = [['team_admin', 'Team admin'], ['member', 'Member'], ['viewer', 'Viewer']];
const ORG_ROLES = [['', 'No organization role'], ['auditor', 'Auditor'], ['admin', 'Admin'], ['owner', 'Owner']];
const INVITATION_WARNING = 'This link is shown once: copy it and hand it to the person yourself. Opening it signs them in; it works one time and expires.';

const csv = (text) => String(text ?? '').split(',').map((item) => item.trim()).filter(Boolean);
const listText = (items) => (items?.length ? items.join(', ') : 'all');
const header = (names) => h('thead', {}, h('tr', {}, names.map((name) => h('th', { scope: 'col', text: name }))));

/** Teams: list, create, edit allowed lists and policy, delete; a link to each team's members. */
export async function renderTeams(view) {
  const answer = await api.get('/admin/teams');
  const teams = answer.data;
  const policies = holdsEverywhere('policies.read') ? await api.get('/admin/policies').then((result) => result.policies, () => []) : [];
  const writable = holdsEverywhere('teams.write');
  const editor = h('div', { id: 'team-editor' });
  const reload = async () => {
    await loadMe();
    window.dispatchEvent(new Event('gateway-teams-changed'));
    await renderTeams(view);
  };
  const table = h('div', { class: 'table-wrap' }, h('table', { class: 'teams' },
    header(['Name', 'Id', 'Description', 'Providers', 'Models', 'Routes', 'Credentials', 'Policy', 'Limits', 'Members', ...(writable ? ['Actions'] : [])]),
    h('tbody', {}, teams.map((team) => {
      const cells = [
        h('th', { scope: 'row', text: team.name }),
        h('td', {}, h('code', { text: team.id })),
        h('td', { text: team.description ?? '' }),
        h('td', { text: listText(team.allowed_providers) }),
        h('td', { text: listText(team.allowed_models) }),
        h('td', { text: listText(team.allowed_routes) }),
        h('td', { text: listText(team.allowed_credentials) }),
        h('td', { text: team.guardrail_policy ?? '—' }),
        h('td', { class: 'team-limits' }, h('a', { href: `#/members/${encodeURIComponent(team.id)}`, 'aria-label': `Limits of ${team.name}`, text: limitsSummary(team.limits) })),
        h('td', {}, h('a', { href: `#/members/${encodeURIComponent(team.id)}`, 'aria-label': `Members of ${team.name}`, text: 'Members' })),
      ];
      if (writable) {
        const edit = h('button', { type: 'button', text: 'Edit', 'aria-label': `Edit ${team.name}` });
        edit.addEventListener('click', () => teamForm(editor, { team, policies, reload }));
        const remove = h('button', { type: 'button', class: 'danger', text: 'Delete', 'aria-label': `Delete ${team.name}` });
        remove.addEventListener('click', async () => {
          if (!confirm(`Delete the team "${team.name}"? Its members lose their role in it.`)) return;
          if ((await api.delete(`/admin/teams/${encodeURIComponent(team.id)}`).then(() => true, failed)) === true) {
            await reload();
            notify(`Deleted ${team.name}.`);
          }
        });
        cells.push(h('td', { class: 'row-actions' }, edit, team.id === 'default' ? null : remove));
      }
      return h('tr', { data: { teamId: team.id, teamName: team.name } }, cells);
    }))));
  const create = h('div', { id: 'team-create' });
  if (writable) teamForm(create, { policies, reload });
  replace(view, h('h1', { text: 'Teams' }),
    h('p', { class: 'muted', text: 'A team owns keys, credentials and routes; its lists limit what its keys may use (empty allows everything). A team\'s limits are on its page (Limits, Members).' }),
    teams.length ? table : h('p', { class: 'muted', text: 'No teams you can see.' }), editor, await organizationLimits(() => renderTeams(view)), create);
}

/**
 * The organization's limits (the level above every team) for organization-wide readers, and the
 * form to set them for callers holding `organization.write`.
 */
async function organizationLimits(reload) {
  if (!holdsEverywhere('teams.read')) return null;
  const organization = await api.get('/admin/organization').catch(() => null);
  if (!organization) return null;
  const form = holdsEverywhere('organization.write')
    ? limitsForm({
        title: "Set the organization's limits",
        id: 'organization-limits-form',
        limits: organization.limits,
        save: async (limits) => {
          await api.patch('/admin/organization', { limits });
          await reload();
          notify("Saved the organization's limits.");
        },
      })
    : null;
  return h('div', { class: 'organization-limits' },
    limitsPanel('Organization limits', organization.limits_usage, { id: 'organization-limits', subject: 'organization' }),
    h('p', { class: 'muted', text: 'Every virtual key and JWT caller counts here (the account key is never limited).' }),
    form);
}

/** A team's limits: what is used of each, and the form for callers holding `teams.write` (rules the form does not show are kept). */
function teamLimits(team, reload) {
  const form = holdsIn('teams.write', team.id)
    ? limitsForm({
        title: `Set the limits of ${team.name}`,
        id: 'team-limits-form',
        limits: team.limits,
        save: async (limits) => {
          await api.patch(`/admin/teams/${encodeURIComponent(team.id)}`, { limits });
          await reload();
          notify(`Saved the limits of ${team.name}.`);
        },
      })
    : null;
  return [limitsPanel(`Limits of ${team.name}`, team.limits_usage, { id: 'team-limits', subject: team.id }), form];
}

/** The create form, or the edit form of `team` (its allowed lists and default policy). */
function teamForm(slot, { team, policies, reload }) {
  const editing = team !== undefined;
  const input = (name, value, props = {}) => h('input', { name, value: value ?? '', autocomplete: 'off', ...props });
  const lists = ['allowed_providers', 'allowed_models', 'allowed_routes', 'allowed_credentials'];
  const labels = { allowed_providers: 'Allowed providers', allowed_models: 'Allowed models', allowed_routes: 'Allowed shared routes', allowed_credentials: 'Allowed shared credentials' };
  const policyOptions = [['', 'No default policy'], ...policies.map((policy) => [policy.name, policy.name])];
  if (team?.guardrail_policy && !policies.some((policy) => policy.name === team.guardrail_policy)) policyOptions.push([team.guardrail_policy, team.guardrail_policy]);
  const titleId = editing ? 'team-edit-title' : 'team-create-title';
  const form = h('form', { class: 'editor', 'aria-labelledby': titleId },
    h('h2', { id: titleId, text: editing ? `Edit ${team.name}` : 'Create a team' }),
    h('div', { class: 'grid' },
      field('Name', input('name', team?.name, { required: true })),
      field('Description', input('description', team?.description)),
      lists.map((name) => field(labels[name], input(name, (team?.[name] ?? []).join(', ')), 'comma-separated; empty allows all')),
      field('Default guardrail policy', select('guardrail_policy', policyOptions, team?.guardrail_policy ?? ''))),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', text: editing ? 'Save team' : 'Create team' }),
      editing ? h('button', { type: 'button', class: 'secondary', text: 'Cancel', on: { click: () => replace(slot) } }) : null));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { name: String(data.get('name')).trim() };
    const description = String(data.get('description') ?? '').trim();
    if (description || editing) body.description = description || null;
    for (const name of lists) {
      const items = csv(data.get(name));
      if (items.length) body[name] = items;
      else if (editing && team[name]) body[name] = null;
    }
    const policy = String(data.get('guardrail_policy') ?? '');
    if (policy) body.guardrail_policy = policy;
    else if (editing && team.guardrail_policy) body.guardrail_policy = null;
    const saved = editing
      ? await api.patch(`/admin/teams/${encodeURIComponent(team.id)}`, body).catch(failed)
      : await api.post('/admin/teams', body).catch(failed);
    if (!saved) return;
    await reload();
    notify(editing ? `Saved ${saved.name}.` : `Created the team ${saved.name}.`);
  });
  replace(slot, form);
  if (editing) form.scrollIntoView({ block: 'start' });
}

/** The team the Members page shows: named in the address, else the switcher's, else the first. */
function membersTeam(rest) {
  if (rest[0]) return rest[0];
  return selectedTeam() || teamList()[0]?.id;
}

/** A team's members: invite by email with a role (the link shown once), change a role, remove. */
export async function renderMembers(view, rest) {
  const teamId = membersTeam(rest);
  if (!teamId) {
    replace(view, h('h1', { text: 'Members' }), h('p', { class: 'muted', text: 'No teams you can see.' }));
    return;
  }
  const team = await api.get(`/admin/teams/${encodeURIComponent(teamId)}`);
  const writable = holdsIn('members.write', team.id);
  const once = h('div', { id: 'shown-once' });
  const reload = () => renderMembers(view, [team.id]);
  const picker = select('members_team', teamList().map((entry) => [entry.id, entry.name]), team.id);
  picker.addEventListener('change', () => {
    location.hash = `#/members/${encodeURIComponent(picker.value)}`;
  });
  const roleOptions = TEAM_ROLES.filter(([role]) => grantable(team.id, role));
  const rows = team.members.map((member) => {
    const self = member.user_id === myUserId();
    const cells = [
      h('th', { scope: 'row', text: member.email }),
      h('td', { class: 'member-role', text: roleLabel(member.role) }),
      h('td', { text: member.status }),
    ];
    if (writable) {
      const actions = h('td', { class: 'row-actions' });
      if (!self && grantable(team.id, member.role)) {
        const role = select('role', roleOptions, member.role);
        role.setAttribute('aria-label', `Role of ${member.email}`);
        const change = h('button', { type: 'button', class: 'secondary', text: 'Change role', 'aria-label': `Change the role of ${member.email}` });
        change.addEventListener('click', async () => {
          if (role.value === member.role) return;
          if ((await api.post(`/admin/teams/${encodeURIComponent(team.id)}/members`, { email: member.email, role: role.value }).then(() => true, failed)) === true) {
            await reload();
            notify(`${member.email} is now ${roleLabel(role.value)} in ${team.name}.`);
          }
        });
        const remove = h('button', { type: 'button', class: 'danger', text: 'Remove', 'aria-label': `Remove ${member.email}` });
        remove.addEventListener('click', async () => {
          if (!confirm(`Remove ${member.email} from ${team.name}?`)) return;
          if ((await api.delete(`/admin/teams/${encodeURIComponent(team.id)}/members/${encodeURIComponent(member.user_id)}`).then(() => true, failed)) === true) {
            await reload();
            notify(`Removed ${member.email} from ${team.name}.`);
          }
        });
        actions.append(role, ' ', change, ' ', remove);
      }
      cells.push(actions);
    }
    return h('tr', { data: { userId: member.user_id, email: member.email } }, cells);
  });
  const table = team.members.length === 0
    ? h('p', { class: 'muted', text: 'No members yet.' })
    : h('div', { class: 'table-wrap' }, h('table', { class: 'members' }, header(['Email', 'Role', 'Status', ...(writable ? ['Actions'] : [])]), h('tbody', {}, rows)));
  let invite = null;
  if (writable && roleOptions.length) {
    invite = h('form', { class: 'editor', 'aria-labelledby': 'invite-member-title' },
      h('h2', { id: 'invite-member-title', text: `Add or invite a member of ${team.name}` }),
      h('p', { class: 'muted', text: 'An email without an account gets a one-time invitation link; an existing user is added with the role.' }),
      h('div', { class: 'grid' },
        field('Email', h('input', { type: 'email', name: 'email', required: true, autocomplete: 'off' })),
        field('Role', select('role', roleOptions, 'member'))),
      h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Invite' })));
    invite.addEventListener('submit', async (event) => {
      event.preventDefault();
      const data = new FormData(invite);
      const answer = await api.post(`/admin/teams/${encodeURIComponent(team.id)}/members`, { email: String(data.get('email')).trim(), role: String(data.get('role')) }).catch(failed);
      if (!answer) return;
      await reload();
      if (answer.invitation) {
        showOnce(document.getElementById('shown-once'), { title: `Invitation for ${answer.user.email}`, value: answer.invitation.url, label: 'Invitation link', warning: `${INVITATION_WARNING} Valid until ${format.time(answer.invitation.expires_at)}.` });
      } else {
        notify(`Added ${answer.user.email} as ${roleLabel(answer.role)}.`);
      }
    });
  }
  replace(view, h('h1', { text: `Members of ${team.name}` }),
    teamList().length > 1 ? h('div', { class: 'inline members-team' }, field('Team', picker)) : null,
    teamLimits(team, reload), h('h2', { text: 'Members' }),
    once, table, invite);
}

const roleLabel = (role) => TEAM_ROLES.find(([id]) => id === role)?.[1] ?? role;
const orgRoleLabel = (role) => ORG_ROLES.find(([id]) => id === (role ?? ''))?.[1] ?? role;

/** A team role the caller may grant (or take) there: organization admins any, else up to their own. */
function grantable(team, role) {
  if (holdsEverywhere('members.write')) return true;
  const rank = { team_admin: 3, member: 2, viewer: 1 };
  return holdsIn('members.write', team) && rank[role] <= (rank[roleIn(team)] ?? 0);
}

/** Organization roles the caller may grant: up to their own, the owner role only as an owner. */
function grantableOrgRoles() {
  if (holdsEverywhere('owners.manage')) return ORG_ROLES;
  return ORG_ROLES.filter(([role]) => role !== 'owner');
}

/** Users: list, invite, suspend or reactivate, organization role. */
export async function renderUsers(view) {
  const users = (await api.get('/admin/users')).data.sort((a, b) => a.email.localeCompare(b.email));
  const writable = holdsEverywhere('users.write');
  const once = h('div', { id: 'shown-once' });
  const reload = () => renderUsers(view);
  const roles = grantableOrgRoles();
  const rows = users.map((user) => {
    const self = user.id === myUserId();
    const protectedOwner = user.role === 'owner' && !holdsEverywhere('owners.manage');
    const cells = [
      h('th', { scope: 'row' }, h('a', { href: `#/users/${encodeURIComponent(user.id)}`, text: user.email })),
      h('td', { text: user.name ?? '' }),
      h('td', { class: 'user-status', text: user.status }),
      h('td', { class: 'user-role', text: orgRoleLabel(user.role) }),
      h('td', { text: user.teams.map((entry) => `${teamName(entry.team_id)} (${roleLabel(entry.role)})`).join(', ') || '—' }),
      h('td', { text: user.last_sign_in_at ? format.time(user.last_sign_in_at) : 'never' }),
      h('td', { class: 'user-limits', text: limitsSummary(user.limits) }),
    ];
    if (writable) {
      const actions = h('td', { class: 'row-actions' });
      if (!self && !protectedOwner) {
        const role = select('role', roles, user.role ?? '');
        role.setAttribute('aria-label', `Organization role of ${user.email}`);
        const save = h('button', { type: 'button', class: 'secondary', text: 'Set role', 'aria-label': `Set the organization role of ${user.email}` });
        save.addEventListener('click', async () => {
          if ((await api.patch(`/admin/users/${encodeURIComponent(user.id)}`, { role: role.value || null }).then(() => true, failed)) === true) {
            await reload();
            notify(`${user.email}: ${orgRoleLabel(role.value)}.`);
          }
        });
        actions.append(role, ' ', save, ' ');
        if (user.status === 'suspended') {
          actions.append(h('button', { type: 'button', text: 'Reactivate', 'aria-label': `Reactivate ${user.email}`, on: { click: () => setStatus(user, 'active') } }));
        } else {
          actions.append(h('button', { type: 'button', class: 'danger', text: 'Suspend', 'aria-label': `Suspend ${user.email}`, on: { click: () => setStatus(user, 'suspended') } }));
        }
        if (user.status === 'invited') {
          const link = h('button', { type: 'button', class: 'secondary', text: 'New invitation link', 'aria-label': `New invitation link for ${user.email}` });
          link.addEventListener('click', async () => {
            const answer = await api.post(`/admin/users/${encodeURIComponent(user.id)}/invitation`).catch(failed);
            if (answer) showOnce(once, { title: `Invitation for ${user.email}`, value: answer.invitation.url, label: 'Invitation link', warning: `${INVITATION_WARNING} Valid until ${format.time(answer.invitation.expires_at)}.` });
          });
          actions.append(' ', link);
        }
      }
      cells.push(actions);
    }
    return h('tr', { data: { userId: user.id, email: user.email, status: user.status } }, cells);
  });
  async function setStatus(user, status) {
    if (status === 'suspended' && !confirm(`Suspend ${user.email}? Their sessions and tokens stop working at once.`)) return;
    if ((await api.patch(`/admin/users/${encodeURIComponent(user.id)}`, { status }).then(() => true, failed)) === true) {
      await reload();
      notify(status === 'suspended' ? `Suspended ${user.email}.` : `Reactivated ${user.email}.`);
    }
  }
  let invite = null;
  if (writable) {
    invite = h('form', { class: 'editor', 'aria-labelledby': 'invite-user-title' },
      h('h2', { id: 'invite-user-title', text: 'Invite a user' }),
      h('div', { class: 'grid' },
        field('Email', h('input', { type: 'email', name: 'email', required: true, autocomplete: 'off' })),
        field('Name', h('input', { name: 'name', autocomplete: 'off' })),
        field('Organization role', select('role', roles, ''), 'add them to teams on the Members page')),
      h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Invite user' })));
    invite.addEventListener('submit', async (event) => {
      event.preventDefault();
      const data = new FormData(invite);
      const body = { email: String(data.get('email')).trim() };
      if (String(data.get('name') ?? '').trim()) body.name = String(data.get('name')).trim();
      if (data.get('role')) body.role = String(data.get('role'));
      const answer = await api.post('/admin/users', body).catch(failed);
      if (!answer) return;
      await reload();
      showOnce(document.getElementById('shown-once'), { title: `Invitation for ${answer.email}`, value: answer.invitation.url, label: 'Invitation link', warning: `${INVITATION_WARNING} Valid until ${format.time(answer.invitation.expires_at)}.` });
    });
  }
  replace(view, h('h1', { text: 'Users' }), once,
    h('div', { class: 'table-wrap' }, h('table', { class: 'users' }, header(['Email', 'Name', 'Status', 'Organization role', 'Teams', 'Last sign-in', 'Limits', ...(writable ? ['Actions'] : [])]), h('tbody', {}, rows))),
    invite);
}

/** One user (`#/users/<id>`): who they are, their teams and what they have used of their limits (every key they own, in whichever team). */
export async function renderUser(view, id) {
  const user = await api.get(`/admin/users/${encodeURIComponent(id)}`);
  replace(view, h('p', {}, h('a', { href: '#/users', text: '← Users' })),
    h('h1', { text: user.email }),
    h('dl', { class: 'user-detail' },
      h('dt', { text: 'Name' }), h('dd', { text: user.name ?? '—' }),
      h('dt', { text: 'Status' }), h('dd', { text: user.status }),
      h('dt', { text: 'Organization role' }), h('dd', { text: orgRoleLabel(user.role) }),
      h('dt', { text: 'Teams' }), h('dd', { text: user.teams.map((entry) => `${teamName(entry.team_id)} (${roleLabel(entry.role)})`).join(', ') || '—' })),
    limitsPanel(`Limits of ${user.email}`, user.limits_usage, { id: 'user-limits', subject: user.id }),
    h('p', { class: 'muted', text: 'Set with PATCH /admin/users/{id} { "limits": … }: they count every key the user owns, in whichever team.' }));
}
