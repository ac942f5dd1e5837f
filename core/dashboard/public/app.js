import { currentSession, signIn, signOut, ssoProviders } from './api.js';
import { renderAudit } from './audit.js';
import { field, h, notify, replace } from './dom.js';
import { renderServiceAccount, renderServiceAccounts, renderTokens } from './accounts.js';
import { renderCatalog } from './catalog.js';
import { renderCredentials, renderKeys } from './keys.js';
import { renderLogDetail } from './detail.js';
import { renderLogs } from './logs.js';
import { renderMcpServer, renderMcpServers } from './mcp.js';
import { renderMembers, renderTeams, renderUser, renderUsers } from './org.js';
import { renderPolicies } from './policies.js';
import { renderQuotas } from './quotas.js';
import { renderRouteDetail, renderRoutes } from './routes.js';
import { currentMe, forgetMe, hasNoAccess, holdsAnywhere, loadMe, renderSwitcher, whoLabel } from './session.js';
import { renderUsage } from './usage.js';

const view = document.getElementById('view');
const nav = document.getElementById('nav');
const signOutButton = document.getElementById('sign-out');
const account = document.getElementById('account');
const who = document.getElementById('who');
const teamSwitch = document.getElementById('team-switch');
let signedIn = false;

/** `#/logs?model=x` → `{ path: ['logs'], query: URLSearchParams }` */
function parseHash() {
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  return { path: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(query ?? '') };
}

const routes = {
  logs: (rest, query) => (rest[0] ? renderLogDetail(view, rest[0]) : renderLogs(view, query)),
  usage: (_rest, query) => renderUsage(view, query),
  keys: () => renderKeys(view),
  credentials: () => renderCredentials(view),
  quotas: () => renderQuotas(view),
  catalog: () => renderCatalog(view),
  routes: (rest) => (rest[0] ? renderRouteDetail(view, rest[0]) : renderRoutes(view)),
  policies: (_rest, query) => renderPolicies(view, query),
  'mcp-servers': (rest) => (rest[0] ? renderMcpServer(view, rest[0]) : renderMcpServers(view)),
  teams: () => renderTeams(view),
  members: (rest) => renderMembers(view, rest),
  users: (rest) => (rest[0] ? renderUser(view, rest[0]) : renderUsers(view)),
  'service-accounts': (rest) => (rest[0] ? renderServiceAccount(view, rest[0]) : renderServiceAccounts(view)),
  tokens: () => renderTokens(view),
  audit: (_rest, query) => renderAudit(view, query),
};

/** The navigation's entries the caller's permissions allow (each names its permission); the others are hidden. */
function allowedLinks() {
  const me = currentMe();
  return [...nav.querySelectorAll('a')].filter((link) => holdsAnywhere(link.dataset.permission) && (link.dataset.usersOnly !== 'true' || Boolean(me?.user)));
}

const pageOf = (link) => link.getAttribute('href').replace(/^#\//, '');

async function route() {
  if (!signedIn) return;
  const { path, query } = parseHash();
  const allowed = allowedLinks().map(pageOf);
  const name = routes[path[0]] && allowed.includes(path[0]) ? path[0] : allowed[0];
  if (!name) return;
  for (const link of nav.querySelectorAll('a')) {
    if (link.getAttribute('href') === `#/${name}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  notify('');
  try {
    await routes[name](path.slice(1), query);
  } catch (error) {
    replace(view, h('p', { class: 'notice error', role: 'alert', text: `Could not load this page: ${error.message}` }));
  }
}

function showSignIn(message) {
  signedIn = false;
  forgetMe();
  nav.hidden = true;
  account.hidden = true;
  const input = h('input', { type: 'password', name: 'api_key', autocomplete: 'off', required: true, spellcheck: 'false' });
  const error = h('p', { class: 'notice error', role: 'alert', hidden: !message, text: message ?? '' });
  const form = h(
    'form',
    { class: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title', text: 'Sign in' }),
    h('p', { text: 'Enter the account API key. It is exchanged for a session cookie and not kept by this page.' }),
    field('Account API key', input),
    error,
    h('button', { type: 'submit', text: 'Sign in' }),
    // Single sign-on: plain links, as the sign-in leaves for the identity provider's pages.
    ...ssoProviders.map((provider) => h('p', {}, h('a', { class: 'sso', href: `/dashboard/auth/login?provider=${encodeURIComponent(provider.id)}`, text: `Sign in with ${provider.name}` }))),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = input.value;
    input.value = '';
    try {
      await signIn(key);
      await showApp();
    } catch (failure) {
      error.hidden = false;
      error.textContent = failure.status === 401 ? 'That key is not the account API key.' : `Sign-in failed: ${failure.message}`;
      input.focus();
    }
  });
  replace(view, form);
  input.focus();
}

/** The team switcher changed: the page is drawn again for that team (a team's Members page shows the switcher's team). */
function switched() {
  const { path } = parseHash();
  if (path[0] === 'members' && path[1]) location.hash = '#/members';
  else route();
}

/** A signed-in user without an organization role or a team: nothing they may see yet. */
function showNoAccess() {
  nav.hidden = true;
  teamSwitch.hidden = true;
  replace(view, h('section', { class: 'no-access', 'aria-labelledby': 'no-access-title' },
    h('h1', { id: 'no-access-title', text: 'You have no access yet' }),
    h('p', { text: `You are signed in as ${whoLabel()}, but you have no role in the organization and belong to no team.` }),
    h('p', { text: 'Ask an administrator to add you to a team or give you a role, then reload this page.' })));
}

async function showApp() {
  signedIn = true;
  await loadMe();
  account.hidden = false;
  who.textContent = whoLabel();
  if (hasNoAccess()) {
    showNoAccess();
    return;
  }
  const allowed = allowedLinks();
  for (const link of nav.querySelectorAll('a')) link.hidden = !allowed.includes(link);
  nav.hidden = false;
  renderSwitcher(teamSwitch, switched);
  if (!location.hash || location.hash === '#') history.replaceState(null, '', `#/${allowed[0] ? pageOf(allowed[0]) : 'logs'}`);
  await route();
  view.focus({ preventScroll: true });
}

// The Teams page changed the teams: the switcher lists them again.
window.addEventListener('gateway-teams-changed', () => renderSwitcher(teamSwitch, switched));

signOutButton.addEventListener('click', async () => {
  try {
    await signOut();
  } finally {
    showSignIn();
  }
});
window.addEventListener('gateway-signed-out', () => showSignIn('Your session ended. Sign in again.'));
window.addEventListener('hashchange', async () => {
  await route();
  view.focus({ preventScroll: true });
});

const session = await currentSession().catch(() => null);
if (session) await showApp();
else showSignIn();
