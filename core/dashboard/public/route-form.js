import { h } from './dom.js';

// The structured editor of a stored route: name, strategy, retry and time limits, and one row per
// target. Every control carries the admin API's `param` path of its value (`name`,
// `route.targets[1].provider`, …), so that a 400 naming a field marks that field: aria-invalid,
// and the message linked by aria-describedby. What the form has no control for (a cache, headers,
// conditions, nested routes, other override_params) is kept as it was.

const MODES = [['fallback', 'Fallback'], ['loadbalance', 'Load balance'], ['single', 'Single']];
const POLICIES = [['weighted', 'Weighted (by weight)'], ['least_busy', 'Least busy'], ['lowest_latency', 'Lowest latency']];

let sequence = 0;
const nextId = (prefix) => `${prefix}-${++sequence}`;

/** `'12'` → 12, `''` → undefined, anything else as typed (the API refuses it on the field). */
function numberOf(text) {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/** `route.targets[1].name` → `route.targets[1]` → `route.targets` → `route` → `''`. */
function parentOf(path) {
  const last = /(\.[^.[\]]+|\[\d+\])$/.exec(path);
  return last ? path.slice(0, -last[0].length) : '';
}

const textOf = (text) => (text.trim() === '' ? undefined : text.trim());

/** Drops undefined members (the API refuses none, but the stored JSON stays tidy). */
const tidy = (object) => Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));

/**
 * A labelled control with a hint and an error slot. `fields` maps the `param` to the control and
 * its error text; the error is linked by aria-describedby only while shown.
 */
function control(fields, param, label, element, hint) {
  element.id ||= nextId('rf');
  element.dataset.param = param;
  const hintId = hint ? `${element.id}-hint` : undefined;
  const error = h('small', { class: 'field-error', id: `${element.id}-error`, hidden: true });
  if (hintId) element.setAttribute('aria-describedby', hintId);
  fields.set(param, { element, error, hintId });
  return h('div', { class: 'field' }, h('label', { for: element.id, text: label }), element, hint ? h('small', { id: hintId, text: hint }) : null, error);
}

function option(value, label, selected) {
  return h('option', { value, selected: value === selected, text: label });
}

/**
 * Builds the form. `initial` is `{ name?, route }`; `catalog` holds the registered providers, the
 * stored credentials and the virtual keys bound to a provider (`virtualKeys`: id, name, hint). `send(body)` stores it (rejecting with the API's error), `done(stored)` follows.
 */
export function routeForm({ title, id, initial, catalog, submitLabel, send, done }) {
  const fields = new Map();
  const route = structuredClone(initial.route ?? { targets: [{}] });
  const summary = h('div', { class: 'notice error form-errors', role: 'alert', tabindex: '-1', hidden: true });

  const name = h('input', { type: 'text', name: 'name', value: initial.name ?? '', autocomplete: 'off', spellcheck: 'false' });
  const modeValue = route.strategy?.mode ?? (route.targets.length > 1 ? 'fallback' : 'single');
  const modes = modeValue === 'conditional' ? [...MODES, ['conditional', 'Conditional (conditions kept; edit them as JSON)']] : MODES;
  const mode = h('select', { name: 'mode' }, modes.map(([value, label]) => option(value, label, modeValue)));
  const policy = h('select', { name: 'policy' }, POLICIES.map(([value, label]) => option(value, label, route.strategy?.policy ?? 'weighted')));
  const policyField = control(fields, 'route.strategy.policy', 'Balancing policy', policy);
  const showPolicy = () => (policyField.hidden = mode.value !== 'loadbalance');
  mode.addEventListener('change', showPolicy);
  showPolicy();
  const attempts = h('input', { type: 'text', inputmode: 'numeric', name: 'retry', value: route.retry?.attempts ?? '' });
  const timeout = h('input', { type: 'text', inputmode: 'numeric', name: 'request_timeout', value: route.request_timeout ?? '' });
  const deadline = h('input', { type: 'text', inputmode: 'numeric', name: 'deadline', value: route.deadline ?? '' });

  const rows = h('div', { class: 'target-rows' });
  const targetRows = [];
  const addButton = h('button', { type: 'button', class: 'secondary', text: 'Add a target' });
  const targetsError = h('small', { class: 'field-error', id: nextId('targets-error'), hidden: true });
  addButton.dataset.param = 'route.targets';
  fields.set('route.targets', { element: addButton, error: targetsError });

  const renumber = () => {
    // Rows are renumbered after a removal: params follow the array index the API will see.
    for (const [param] of [...fields]) if (/^route\.targets\[\d+\]/.test(param)) fields.delete(param);
    targetRows.forEach((row, index) => row.renumber(index));
  };

  const addTarget = (target) => {
    const row = targetRow(target, catalog, fields, () => {
      targetRows.splice(targetRows.indexOf(row), 1);
      row.element.remove();
      renumber();
      addButton.focus();
    });
    targetRows.push(row);
    rows.append(row.element);
    renumber();
    return row;
  };
  for (const target of route.targets) addTarget(target);
  addButton.addEventListener('click', () => {
    const row = addTarget({ provider: catalog.providers[0] });
    row.focus();
  });

  const form = h('form', { class: 'editor route-form', 'aria-labelledby': id, novalidate: true },
    h('h2', { id, text: title }),
    h('div', { class: 'grid' },
      control(fields, 'name', 'Name', name, 'unique; requests and keys may name the route by it'),
      control(fields, 'route.strategy.mode', 'Strategy', mode, 'fallback: in order, the next on failure; load balance: one by weight or load'),
      policyField,
      control(fields, 'route.retry.attempts', 'Retries per target', attempts, '0 to 10; empty: none'),
      control(fields, 'route.request_timeout', 'Attempt time-out (ms)', timeout, 'empty: the gateway’s'),
      control(fields, 'route.deadline', 'Deadline (ms)', deadline, 'all attempts together; empty: none')),
    h('fieldset', { class: 'targets-fieldset' },
      h('legend', { text: 'Targets' }),
      rows,
      h('div', { class: 'actions' }, addButton, targetsError)),
    summary,
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: submitLabel })));

  const clearErrors = () => {
    summary.hidden = true;
    for (const { element, error, hintId } of fields.values()) {
      element.removeAttribute('aria-invalid');
      if (hintId) element.setAttribute('aria-describedby', hintId);
      else element.removeAttribute('aria-describedby');
      error.hidden = true;
      error.textContent = '';
    }
  };

  /** Marks the control of `param`, or of its nearest parent path that has one; false when none does. */
  const showError = (param, message) => {
    let path = param;
    while (path && !fields.has(path)) path = parentOf(path);
    const entry = path ? fields.get(path) : undefined;
    if (!entry) return false;
    entry.error.textContent = message;
    entry.error.hidden = false;
    entry.element.setAttribute('aria-invalid', 'true');
    entry.element.setAttribute('aria-describedby', [entry.error.id, entry.hintId].filter(Boolean).join(' '));
    entry.element.focus();
    return true;
  };

  const read = () => {
    const strategy = { ...(route.strategy ?? {}), mode: mode.value };
    if (mode.value === 'loadbalance') strategy.policy = policy.value;
    else delete strategy.policy;
    if (mode.value !== 'conditional') {
      delete strategy.conditions;
      delete strategy.default;
    }
    if (mode.value !== 'fallback') delete strategy.on_status_codes;
    const retryAttempts = numberOf(attempts.value);
    const next = tidy({
      ...route,
      strategy,
      targets: targetRows.map((row) => row.read()),
      retry: retryAttempts === undefined ? undefined : { ...(route.retry ?? {}), attempts: retryAttempts },
      request_timeout: numberOf(timeout.value),
      deadline: numberOf(deadline.value),
    });
    return tidy({ name: textOf(name.value), route: next });
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    try {
      const stored = await send(read());
      await done(stored);
    } catch (failure) {
      const param = failure.body?.error?.param;
      const message = failure.body?.error?.message ?? failure.message;
      // On the field, the message need not repeat where it is ("Invalid route at 'route.targets[1].name': …").
      if (!param || !showError(param, message.replace(/^Invalid route at '[^']*': /, ''))) {
        summary.hidden = false;
        summary.textContent = param ? `${message} (param: ${param})` : message;
        summary.focus();
      }
    }
  });
  return form;
}

/** One target as a fieldset: what it calls, its model, weight and time-out, and a Remove button. */
function targetRow(initial, catalog, fields, remove) {
  const target = structuredClone(initial ?? {});
  const legend = h('legend');
  const kindValue = target.route ? 'route' : target.virtual_key !== undefined ? 'virtual_key' : 'provider';
  const kinds = [['provider', 'A provider'], ['virtual_key', 'A virtual key']];
  if (kindValue === 'route') kinds.push(['route', 'A nested route (edit it as JSON)']);
  const kind = h('select', { name: 'kind' }, kinds.map(([value, label]) => option(value, label, kindValue)));
  const name = h('input', { type: 'text', name: 'target_name', value: target.name ?? '', autocomplete: 'off', spellcheck: 'false' });
  const providers = [...catalog.providers];
  if (target.provider && !providers.includes(target.provider)) providers.unshift(target.provider);
  const provider = h('select', { name: 'provider' }, providers.map((id) => option(id, id, target.provider ?? providers[0])));
  const credential = h('select', { name: 'credential' },
    option('', 'None: the caller’s own key', target.credential ?? ''),
    catalog.credentials.map((item) => option(item.id, `${item.name}${item.provider ? ` (${item.provider})` : ''}`, target.credential ?? '')),
    target.credential && !catalog.credentials.some((item) => item.id === target.credential) ? option(target.credential, target.credential, target.credential) : null);
  const host = h('input', { type: 'text', name: 'custom_host', value: target.custom_host ?? '', spellcheck: 'false', placeholder: 'https://…' });
  // A key is named by its id (never its value): the keys bound to a provider, by name and hint.
  const keyOptions = (catalog.virtualKeys ?? []).map((key) => [key.id, `${key.name} (${key.key_hint})`]);
  if (target.virtual_key && !keyOptions.some(([value]) => value === target.virtual_key)) {
    keyOptions.unshift([target.virtual_key, target.virtual_key_hint ? `${target.virtual_key} (${target.virtual_key_hint})` : target.virtual_key]);
  }
  const virtualKey = h('select', { name: 'virtual_key' }, keyOptions.map(([value, label]) => option(value, label, target.virtual_key ?? keyOptions[0]?.[0])));
  const model = h('input', { type: 'text', name: 'model', value: target.override_params?.model ?? '', spellcheck: 'false' });
  const weight = h('input', { type: 'text', inputmode: 'decimal', name: 'weight', value: target.weight ?? '' });
  const timeout = h('input', { type: 'text', inputmode: 'numeric', name: 'target_timeout', value: target.request_timeout ?? '' });
  const removeButton = h('button', { type: 'button', class: 'danger', text: 'Remove' });
  removeButton.addEventListener('click', remove);
  const grid = h('div', { class: 'grid' });
  const element = h('fieldset', { class: 'target-row' }, legend, grid, h('div', { class: 'actions' }, removeButton));

  let index = 0;
  const layout = () => {
    const at = `route.targets[${index}]`;
    for (const param of [...fields.keys()]) if (param === at || param.startsWith(`${at}.`)) fields.delete(param);
    const providerSide = kind.value === 'provider';
    const children = [
      control(fields, `${at}.name`, 'Target name', name, 'shown in logs and x-gateway-route-target'),
      control(fields, `${at}`, 'Calls', kind),
      providerSide ? control(fields, `${at}.provider`, 'Provider', provider) : null,
      providerSide ? control(fields, `${at}.credential`, 'Credential', credential) : null,
      providerSide ? control(fields, `${at}.custom_host`, 'Custom host', host, 'empty: the provider’s') : null,
      kind.value === 'virtual_key' ? control(fields, `${at}.virtual_key`, 'Virtual key', virtualKey, keyOptions.length ? 'its provider, credential and custom host are used' : 'no virtual key bound to a provider yet: create one on the Keys page') : null,
      kind.value === 'route' ? h('p', { class: 'muted', text: 'A nested route: kept as it is; edit it in the JSON editor.' }) : null,
      control(fields, `${at}.override_params.model`, 'Model', model, 'empty: the request’s own'),
      control(fields, `${at}.weight`, 'Weight', weight, 'load balancing; default 1'),
      control(fields, `${at}.request_timeout`, 'Time-out (ms)', timeout, 'per attempt; empty: the route’s'),
    ];
    grid.replaceChildren(...children.filter(Boolean));
  };
  kind.addEventListener('change', layout);

  return {
    element,
    renumber(position) {
      index = position;
      legend.textContent = `Target ${position + 1}`;
      removeButton.setAttribute('aria-label', `Remove target ${position + 1}`);
      layout();
    },
    focus: () => name.focus(),
    read() {
      const next = { ...target };
      for (const field of ['name', 'provider', 'credential', 'custom_host', 'virtual_key', 'virtual_key_hint', 'weight', 'request_timeout']) delete next[field];
      if (kind.value !== 'route') delete next.route;
      next.name = textOf(name.value);
      if (kind.value === 'provider') {
        next.provider = provider.value;
        next.credential = credential.value || undefined;
        next.custom_host = textOf(host.value);
      } else if (kind.value === 'virtual_key') {
        next.virtual_key = virtualKey.value || '';
      }
      const params = { ...(target.override_params ?? {}) };
      if (textOf(model.value) === undefined) delete params.model;
      else params.model = textOf(model.value);
      next.override_params = Object.keys(params).length ? params : undefined;
      next.weight = numberOf(weight.value);
      next.request_timeout = numberOf(timeout.value);
      return tidy(next);
    },
  };
}
