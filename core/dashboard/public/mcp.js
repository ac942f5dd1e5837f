import { api } from './api.js';
import { field, format, h, notify, replace, select } from './dom.js';
import { diffList, versionDiff } from './routes.js';
import { failed, holdsAnywhere } from './session.js';

// The MCP servers page (docs/mcp.md): the registered upstream servers, a form to register one, and
// each server's page with its tools, what changed since an admin approved them (a diff, with an
// Approve button per tool), an edit form and deletion. Everything goes through /admin/mcp-servers.

const HIDDEN = '[hidden]';

/** What the selects offer: the stored credentials (names only) and the configured policies, when the caller may read them. */
async function choices() {
  const [credentials, policies] = await Promise.all([
    holdsAnywhere('credentials.read') ? api.get('/admin/credentials').then((answer) => answer.data, () => []) : [],
    holdsAnywhere('policies.read') ? api.get('/admin/policies').then((answer) => answer.policies.map((policy) => policy.name), () => []) : [],
  ]);
  return { credentials: [...credentials].sort((a, b) => a.name.localeCompare(b.name)), policies };
}

/** Globs typed one per line or separated by commas or spaces. */
const globs = (text) => text.split(/[\s,]+/).map((entry) => entry.trim()).filter(Boolean);

/** `Name: value` lines as a headers object; undefined when there are none. */
function headersOf(text) {
  const headers = {};
  for (const line of text.split('\n').map((entry) => entry.trim()).filter(Boolean)) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`"${line}" is not a "Name: value" header line.`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return Object.keys(headers).length ? headers : undefined;
}

/** A tool glob (`*` any run, `?` one character) as a whole-name test, as the gateway matches `allowed_tools`. */
const globMatch = (glob, name) => new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(name);

/** What the gateway does with a listed tool: served, held back since it changed, or outside `allowed_tools`. */
function toolState(server, name) {
  if (server.allowed_tools && !server.allowed_tools.some((glob) => globMatch(glob, name))) return 'not in allowed tools';
  if (server.held_tools.some((held) => held.name === name)) return server.on_tool_change === 'serve-approved' ? 'changed: served as approved' : 'changed: withheld';
  return 'served';
}

const statusBadge = (server) => h('span', { class: `mcp-status mcp-status-${server.status}`, text: server.status });
const changeCount = (server) => server.held_tools.length + (server.added_tools?.length ?? 0) + (server.removed_tools?.length ?? 0);

/**
 * The register / edit form: every field of the admin API's server body. `initial` is a server as the
 * API shows it (editing: header values come back as `[hidden]` and are kept unless retyped).
 */
function serverForm({ title, id, initial = {}, choices: { credentials, policies }, submitLabel, send, done }) {
  const input = (name, props = {}) => {
    const control = h('input', { name, ...props });
    if (initial[name] !== undefined) control.value = String(initial[name]);
    return control;
  };
  const name = input('name', { required: true, autocomplete: 'off', spellcheck: 'false' });
  const transport = select('transport', [['streamable-http', 'Streamable HTTP'], ['sse', 'HTTP + SSE (legacy)']], initial.transport ?? 'streamable-http');
  const url = input('url', { type: 'url', required: true, spellcheck: 'false', placeholder: 'https://mcp.example.com/mcp' });
  const stored = credentials.some((credential) => credential.id === initial.credential);
  const credential = select('credential', [['', 'None'], ...credentials.map((entry) => [entry.id, `${entry.name} (${entry.id})`]), ...(initial.credential && !stored ? [[initial.credential, initial.credential]] : [])], initial.credential ?? '');
  const credentialHeader = input('credential_header', { spellcheck: 'false', placeholder: 'Authorization: Bearer (default)' });
  const headers = h('textarea', { name: 'headers', rows: '3', spellcheck: 'false', placeholder: 'x-team: search' });
  headers.value = Object.entries(initial.headers ?? {}).map(([header, value]) => `${header}: ${value}`).join('\n');
  const allowed = h('textarea', { name: 'allowed_tools', rows: '2', spellcheck: 'false', placeholder: 'get_* search_*' });
  allowed.value = (initial.allowed_tools ?? []).join('\n');
  const timeout = input('timeout_ms', { type: 'number', min: '100', max: '600000', step: '1', placeholder: '30000' });
  const maxResult = input('max_result_bytes', { type: 'number', min: '1', step: '1', placeholder: '10485760' });
  const policy = select('guardrail_policy', [['', 'None'], ...policies.map((entry) => [entry, entry]), ...(initial.guardrail_policy && !policies.includes(initial.guardrail_policy) ? [[initial.guardrail_policy, initial.guardrail_policy]] : [])], initial.guardrail_policy ?? '');
  const error = h('p', { class: 'notice error', role: 'alert', hidden: true });
  const form = h('form', { class: 'editor mcp-form', 'aria-labelledby': id },
    h('h2', { id, text: title }),
    h('div', { class: 'grid' },
      field('Name', name, 'the tool prefix: <name>__<tool> on /mcp'),
      field('Transport', transport),
      field('URL', url),
      field('Credential', credential, 'a stored credential; its secret goes upstream, never shown'),
      field('Credential header', credentialHeader, 'e.g. x-api-key; empty: Authorization: Bearer'),
      field('Timeout (ms)', timeout, 'each upstream request; default 30 000'),
      field('Max result bytes', maxResult, 'larger results are an error; default 10 MiB'),
      field('Guardrail policy', policy, 'judges tool calls after the key’s policy')),
    field('Headers', headers, `one "Name: value" per line; values are never shown back (${HIDDEN} keeps the stored one)`),
    field('Allowed tools', allowed, 'globs (* and ?), one per line or separated by spaces; empty: every tool'),
    error,
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: submitLabel })));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let body;
    try {
      const number = (control) => (control.value.trim() === '' ? undefined : Number(control.value));
      body = {
        name: name.value.trim(),
        transport: transport.value,
        url: url.value.trim(),
        credential: credential.value || undefined,
        credential_header: credentialHeader.value.trim() || undefined,
        headers: headersOf(headers.value),
        allowed_tools: globs(allowed.value).length ? globs(allowed.value) : undefined,
        timeout_ms: number(timeout),
        max_result_bytes: number(maxResult),
        guardrail_policy: policy.value || undefined,
      };
      // Settings the form has no control for are kept as they are (a PUT replaces the whole body).
      for (const kept of ['oauth', 'on_tool_change', 'tool_requests_per_minute', 'cost_per_call_usd']) if (initial[kept] !== undefined) body[kept] = initial[kept];
    } catch (failure) {
      error.hidden = false;
      error.textContent = failure.message;
      return;
    }
    try {
      const saved = await send(JSON.parse(JSON.stringify(body)));
      error.hidden = true;
      await done(saved);
    } catch (failure) {
      const param = failure.body?.error?.param;
      error.hidden = false;
      error.textContent = param ? `${failure.message} (field: ${param})` : failure.message;
      const control = param ? form.querySelector(`[name="${CSS.escape(param.split('.')[0])}"]`) : null;
      (control ?? name).focus();
    }
  });
  return form;
}

/** The registered servers, and the register form (with `mcp.write`). */
export async function renderMcpServers(view) {
  const [servers, options] = await Promise.all([api.get('/admin/mcp-servers').then((answer) => answer.data), choices()]);
  const table = servers.length === 0
    ? h('p', { class: 'muted', text: 'No MCP servers registered yet.' })
    : h('div', { class: 'table-wrap' }, h('table', { class: 'mcp-servers' },
      h('thead', {}, h('tr', {}, ['Name', 'Transport', 'URL', 'Status', 'Tools', 'Changed since approval', 'Updated'].map((name) => h('th', { scope: 'col', text: name })))),
      h('tbody', {}, servers.map((server) => h('tr', { data: { serverId: server.id, serverName: server.name } },
        h('th', { scope: 'row' }, h('a', { href: `#/mcp-servers/${encodeURIComponent(server.id)}`, text: server.name })),
        h('td', { text: server.transport }),
        h('td', {}, h('code', { text: server.url })),
        h('td', {}, statusBadge(server)),
        h('td', { class: 'number', text: format.count(server.tools.length) }),
        h('td', { class: 'number changes', text: changeCount(server) ? format.count(changeCount(server)) : '—' }),
        h('td', { text: format.time(server.updated_at) }))))));
  const writable = holdsAnywhere('mcp.write');
  replace(view,
    h('h1', { text: 'MCP servers' }),
    h('p', { class: 'muted', text: 'Upstream MCP servers behind /mcp. Registering probes the server (initialize, tools/list) and approves its tools as listed; an unreachable server is stored with its status. stdio servers come from gateway.config.ts only.' }),
    table,
    writable
      ? serverForm({
        title: 'Register a server',
        id: 'mcp-register-title',
        choices: options,
        submitLabel: 'Register',
        send: (body) => api.post('/admin/mcp-servers', body),
        done: (server) => {
          notify(`Registered ${server.name} (${server.status}).`);
          location.hash = `#/mcp-servers/${encodeURIComponent(server.id)}`;
        },
      })
      : null);
}

/** What a held tool tells a model, as approved and as listed now: the parts the approval covers. */
const definition = (tool) => ({ title: tool.title, description: tool.description, inputSchema: tool.inputSchema });

/** The changes since approval: each held tool's diff with Approve, the added tools (approvable), the removed ones. */
function changesSection(server, reload) {
  const writable = holdsAnywhere('mcp.write');
  const approve = (tool) => {
    const button = h('button', { type: 'button', class: 'approve', 'aria-label': `Approve ${tool}`, text: 'Approve' });
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        await api.post(`/admin/mcp-servers/${encodeURIComponent(server.id)}/tools/${encodeURIComponent(tool)}/approve`);
        await reload();
        notify(`Approved ${tool}.`);
      } catch (error) {
        failed(error);
        button.disabled = false;
      }
    });
    return button;
  };
  const added = server.added_tools ?? [];
  const removed = server.removed_tools ?? [];
  if (server.held_tools.length + added.length + removed.length === 0) return h('p', { class: 'muted no-changes', text: 'The server lists its tools as they were approved.' });
  return [
    server.held_tools.length
      ? h('p', { class: 'notice warn', text: server.on_tool_change === 'serve-approved' ? 'Changed tools are served with their approved definition until approved.' : 'Changed tools are withheld (neither listed nor callable) until approved.' })
      : null,
    server.held_tools.map((held) => h('section', { class: 'held-tool', 'aria-labelledby': `held-${held.name}`, data: { tool: held.name } },
      h('h3', { id: `held-${held.name}`, class: 'diff-title' }, h('span', { class: 'diff-kind', text: 'changed' }), ' ', h('code', { text: held.name })),
      diffList(versionDiff(definition(held.approved), definition(held.current))),
      writable ? approve(held.name) : null)),
    added.length
      ? h('section', { class: 'added-tools', 'aria-labelledby': 'added-tools-title' },
        h('h3', { id: 'added-tools-title', class: 'diff-title', text: 'Added since approval (served; approve to hold later changes)' }),
        h('ul', { class: 'diff' }, added.map((tool) => h('li', { class: 'diff-added', data: { tool } }, h('span', { class: 'diff-kind', text: 'added' }), ' ', h('code', { text: tool }), ' ', writable ? approve(tool) : null))))
      : null,
    removed.length
      ? h('section', { class: 'removed-tools', 'aria-labelledby': 'removed-tools-title' },
        h('h3', { id: 'removed-tools-title', class: 'diff-title', text: 'Removed since approval' }),
        h('ul', { class: 'diff' }, removed.map((tool) => h('li', { class: 'diff-removed', data: { tool } }, h('span', { class: 'diff-kind', text: 'removed' }), ' ', h('code', { text: tool })))))
      : null,
  ];
}

/** One server: its settings and status, its tools, the changes since approval, the edit form and deletion. */
export async function renderMcpServer(view, id) {
  const [server, options] = await Promise.all([api.get(`/admin/mcp-servers/${encodeURIComponent(id)}`), choices()]);
  const reload = () => renderMcpServer(view, id);
  const writable = holdsAnywhere('mcp.write');
  const credentialName = options.credentials.find((entry) => entry.id === server.credential)?.name;
  const tools = server.tools.length === 0
    ? h('p', { class: 'muted', text: server.status === 'ok' ? 'The server lists no tools.' : 'No tools: the server could not be reached.' })
    : h('div', { class: 'table-wrap' }, h('table', { class: 'mcp-tools' },
      h('thead', {}, h('tr', {}, ['Tool', 'Name on /mcp', 'State', 'Description (as listed now)'].map((name) => h('th', { scope: 'col', text: name })))),
      h('tbody', {}, server.tools.map((tool) => h('tr', { data: { tool: tool.name } },
        h('th', { scope: 'row' }, h('code', { text: tool.name })),
        h('td', {}, h('code', { text: `${server.name}__${tool.name}` })),
        h('td', { class: 'tool-state', text: toolState(server, tool.name) }),
        h('td', { class: 'tool-description', text: tool.description ?? '' }))))));
  const remove = h('button', {
    type: 'button',
    class: 'danger',
    text: 'Delete server',
    on: {
      click: async () => {
        if (!window.confirm(`Delete the MCP server ${server.name}? Its tools leave every key's listing at once.`)) return;
        try {
          await api.delete(`/admin/mcp-servers/${encodeURIComponent(server.id)}`);
          notify(`Deleted ${server.name}.`);
          location.hash = '#/mcp-servers';
        } catch (error) {
          failed(error);
        }
      },
    },
  });
  replace(view,
    h('p', {}, h('a', { href: '#/mcp-servers', text: '← MCP servers' })),
    h('h1', {}, server.name, ' ', statusBadge(server)),
    h('dl', { class: 'pairs mcp-settings' },
      h('dt', { text: 'Id' }), h('dd', {}, h('code', { text: server.id })),
      h('dt', { text: 'Transport' }), h('dd', { text: server.transport }),
      h('dt', { text: 'URL' }), h('dd', {}, h('code', { text: server.url })),
      h('dt', { text: 'Status' }), h('dd', { class: 'status-detail', text: server.status_detail ? `${server.status}: ${server.status_detail}` : server.status }),
      h('dt', { text: 'Credential' }), h('dd', { text: server.credential ? `${credentialName ?? server.credential}${server.credential_header ? ` as ${server.credential_header}` : ' as Authorization: Bearer'}` : 'none' }),
      h('dt', { text: 'Headers' }), h('dd', { text: Object.keys(server.headers ?? {}).join(', ') || 'none' }),
      h('dt', { text: 'Allowed tools' }), h('dd', { text: server.allowed_tools?.join(', ') ?? 'every tool' }),
      h('dt', { text: 'Timeout' }), h('dd', { text: format.ms(server.timeout_ms ?? 30000) }),
      h('dt', { text: 'Max result' }), h('dd', { text: `${format.count(server.max_result_bytes ?? 10 * 1024 * 1024)} bytes` }),
      h('dt', { text: 'Guardrail policy' }), h('dd', { text: server.guardrail_policy ?? 'none' }),
      h('dt', { text: 'Version' }), h('dd', { text: `${server.version}, updated ${format.time(server.updated_at)}` }),
      h('dt', { text: 'Tools listed' }), h('dd', { text: format.time(server.tools_listed_at) })),
    h('h2', { text: 'Tools' }),
    tools,
    h('h2', { id: 'changes-title', text: 'Changes since approval' }),
    changesSection(server, reload),
    writable
      ? [
        serverForm({
          title: 'Edit',
          id: 'mcp-edit-title',
          initial: server,
          choices: options,
          submitLabel: 'Save (probes again and approves the tools as listed)',
          send: (body) => api.put(`/admin/mcp-servers/${encodeURIComponent(server.id)}`, body),
          done: async (saved) => {
            await reload();
            notify(`Saved ${saved.name} (version ${saved.version}, ${saved.status}).`);
          },
        }),
        h('div', { class: 'actions danger-zone' }, remove),
      ]
      : null);
}
