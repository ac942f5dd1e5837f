import { currentSession, signIn, signOut, ssoProviders } from './api.js';
import { renderAudit } from './audit.js';
import { field, h, notify, replace } from './dom.js';
import { renderCatalog } from './catalog.js';
import { renderCredentials, renderKeys } from './keys.js';
import { renderLogDetail } from './detail.js';
import { renderLogs } from './logs.js';
import { renderPolicies } from './policies.js';
import { renderRouteDetail, renderRoutes } from './routes.js';
import { renderUsage } from './usage.js';

const view = document.getElementById('view');
const nav = document.getElementById('nav');
const signOutButton = document.getElementById('sign-out');
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
  catalog: () => renderCatalog(view),
  routes: (rest) => (rest[0] ? renderRouteDetail(view, rest[0]) : renderRoutes(view)),
  policies: (_rest, query) => renderPolicies(view, query),
  audit: (_rest, query) => renderAudit(view, query),
};

async function route() {
  if (!signedIn) return;
  const { path, query } = parseHash();
  const name = routes[path[0]] ? path[0] : 'logs';
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
  nav.hidden = true;
  signOutButton.hidden = true;
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

async function showApp() {
  signedIn = true;
  nav.hidden = false;
  signOutButton.hidden = false;
  if (!location.hash || location.hash === '#') history.replaceState(null, '', '#/logs');
  await route();
  view.focus({ preventScroll: true });
}

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
