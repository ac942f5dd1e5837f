import { parseArgs } from 'node:util';
import type { GatewayConfig, ResolvedConfig } from '../../config/index.js';
import { resolveConfig } from '../../config/index.js';
import { VirtualKeyActions } from '../admin/virtual-key-actions.js';
import { GatewayError } from '../errors.js';
import { CustomHostGuard } from '../http/custom-host.js';
import { VaultService } from '../vault/service.js';
import { COMMAND_HELP, GENERAL_HELP } from './help.js';
import { didYouMean } from './suggest.js';
import type { CliIo } from '../cli-io.js';
import { changingAction, type NotedChange, noted, recordCliChanges } from './vault-audit.js';

export type { CliIo } from '../cli-io.js';

/** The flags each action takes (besides the global --json); anything else is a usage error. */
const KEY_FIELDS = ['policy', 'budget-usd', 'budget-period', 'rpm', 'rpd', 'users', 'models', 'routes', 'expires-at', 'no-log-bodies'] as const;
const ACTION_FLAGS: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  credentials: {
    create: ['name', 'provider', 'stdin'],
    list: [],
    delete: [],
    rotate: ['stdin'],
  },
  keys: {
    create: ['name', 'provider', 'credential', 'stdin', 'custom-host', ...KEY_FIELDS],
    update: ['name', 'credential', 'stdin', 'custom-host', ...KEY_FIELDS, 'log-bodies'],
    list: [],
    get: [],
    show: [],
    usage: [],
    rotate: [],
    delete: [],
  },
  'rotate-master-key': { '': [] },
};

const BOOLEAN_FLAGS = new Set(['stdin', 'json', 'no-log-bodies', 'log-bodies']);

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** A structured secret from stdin (`--json`); the parser's message, which quotes the text, is not shown. */
async function jsonSecret(stdin: NodeJS.ReadableStream): Promise<Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readStdin(stdin));
  } catch {
    throw new UsageError('with --json, stdin must be a JSON object: {"api_key": "...", "fields": {...}}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('with --json, stdin must be a JSON object: {"api_key": "...", "fields": {...}}');
  return parsed as Record<string, unknown>;
}

/** What an operator wrote wrong on the command line; printed with the command's usage, once. */
class UsageError extends Error {}

/** The flag (or variable) an operator sets for each admin API field the validation names. */
const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  name: '--name',
  provider: '--provider',
  credential_id: '--credential',
  provider_key: 'the provider key (GATEWAY_PROVIDER_KEY or --stdin)',
  api_key: 'the secret (GATEWAY_PROVIDER_KEY or --stdin)',
  custom_host: '--custom-host',
  guardrail_policy: '--policy',
  expires_at: '--expires-at',
  log_bodies: '--no-log-bodies',
  'limits.budget_usd': '--budget-usd',
  'limits.budget_period': '--budget-period',
  'limits.requests_per_minute': '--rpm',
  'limits.requests_per_day': '--rpd',
  'limits.allowed_users': '--users',
  'limits.allowed_models': '--models',
  allowed_routes: '--routes',
};

/** A validation error as the operator typed it: the flag rather than the API field. */
function flagMessage(error: GatewayError): string {
  const param = error.body.param;
  if (!param) return error.body.message;
  // A list entry (`allowed_routes[1]`) is the list's flag.
  const flag = FLAG_OF_FIELD[param] ?? FLAG_OF_FIELD[param.replace(/\[\d+\]$/, '')];
  return flag ? `${error.body.message.replaceAll(`'${param}'`, flag)} (${flag})` : `${error.body.message} (${param})`;
}

/**
 * Reads a secret typed at a terminal without echoing it (raw mode, so the characters never reach
 * the screen); Ctrl-C aborts. Used when stdin is a TTY, with `--stdin` or when no variable holds
 * the secret.
 */
async function promptHidden(stdin: NodeJS.ReadStream, stderr: NodeJS.WritableStream, label: string): Promise<string> {
  // Raw mode before the prompt: whatever is typed (or pasted) once the prompt shows is never echoed.
  stdin.setRawMode(true);
  stderr.write(label);
  stdin.resume();
  try {
    let typed = '';
    for await (const chunk of stdin) {
      for (const character of Buffer.from(chunk as Buffer).toString('utf8')) {
        if (character === '\u0003') throw new UsageError('aborted');
        if (character === '\r' || character === '\n' || character === '\u0004') return typed;
        typed = character === '\u007f' || character === '\b' ? typed.slice(0, -1) : typed + character;
      }
    }
    return typed;
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    stderr.write('\n');
  }
}

/** One record as `field: value` lines (nested values as JSON), for people. */
function humanRecord(record: Record<string, unknown>): string {
  return Object.entries(record)
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([field, value]) => `${field}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join('\n');
}

/** A result for people: a list as blocks separated by a blank line, a record as lines. */
function humanOutput(value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.map((entry) => humanRecord(entry as Record<string, unknown>)).join('\n\n');
  if (typeof value === 'object' && value !== null) return humanRecord(value as Record<string, unknown>);
  return String(value);
}

const number = (value: string | undefined, flag: string): number | undefined => {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new UsageError(`${flag} must be a number`);
  return parsed;
};

const list = (value: string | undefined): string[] | undefined =>
  value === undefined ? undefined : value.split(',').map((entry) => entry.trim()).filter(Boolean);

/** `keys update` takes `none` to remove an optional field (null in the admin API). */
const NONE = 'none';
const clearable = (value: string | boolean | undefined): string | null | undefined => (value === NONE ? null : (value as string | undefined));

/**
 * The limits after `keys update`: the admin API replaces `limits` whole, so the flags given change
 * those fields of the key's current limits and keep the rest; `none` removes one (removing the
 * budget removes its period). Undefined when no limit flag was given, null when none is left.
 */
function updatedLimits(current: object | undefined, values: Record<string, string | boolean | undefined>): Record<string, unknown> | null | undefined {
  const given: Array<[string, string, (value: string) => unknown]> = [
    ['budget-usd', 'budget_usd', (value) => number(value, '--budget-usd')],
    ['budget-period', 'budget_period', (value) => value],
    ['rpm', 'requests_per_minute', (value) => number(value, '--rpm')],
    ['rpd', 'requests_per_day', (value) => number(value, '--rpd')],
    ['users', 'allowed_users', list],
    ['models', 'allowed_models', list],
  ];
  const changes = given.filter(([flag]) => values[flag] !== undefined);
  if (changes.length === 0) return undefined;
  const limits: Record<string, unknown> = { ...current };
  for (const [flag, field, parse] of changes) {
    const value = values[flag] as string;
    if (value === NONE) delete limits[field];
    else limits[field] = parse(value);
  }
  if (values['budget-usd'] === NONE) delete limits.budget_period;
  return Object.keys(limits).length > 0 ? limits : null;
}

/**
 * The operators' command line for credentials, virtual keys and the master key. It works on the
 * store directly (same validation as the admin API) and never takes a secret from argv.
 */
/** The vault a command-line process opens: the gateway's stores, no credential cache. */
export function cliVaultService(config: ResolvedConfig, environment: NodeJS.ProcessEnv): VaultService {
  return new VaultService({
    dataDir: config.dataDir,
    redisUrl: config.redisUrl,
    redisPrefix: config.vault.redisPrefix,
    environment,
    credentialCacheMs: 0,
    pricing: config.pricing,
    outputTokenEstimate: config.vault.outputTokenEstimate,
  });
}

/** The parsed command line of one action, or the usage error it makes. */
function parseAction(group: string, action: string | undefined, rest: readonly string[]): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  const actions = ACTION_FLAGS[group];
  const name = group === 'rotate-master-key' ? '' : (action ?? '');
  if (!Object.hasOwn(actions, name)) {
    throw new UsageError(`unknown action "${group} ${action}"${didYouMean(action ?? '', Object.keys(actions))}`);
  }
  const allowed = [...actions[name], 'json'];
  try {
    return parseArgs({
      args: group === 'rotate-master-key' ? [action, ...rest].filter((entry) => entry !== undefined) : [...rest],
      allowPositionals: true,
      options: Object.fromEntries(allowed.map((flag) => [flag, { type: BOOLEAN_FLAGS.has(flag) ? 'boolean' : 'string' }])) as Record<string, { type: 'boolean' | 'string' }>,
    });
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const flag = /'(-[^' ]+)/.exec(message)?.[1];
    const command = `${group}${name ? ` ${name}` : ''}`;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag !== undefined) {
      throw new UsageError(`unknown option ${flag} for "${command}"${didYouMean(flag.replace(/^-+/, ''), allowed).replace(/"([^"]+)"/, '"--$1"')}`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag !== undefined) throw new UsageError(`${flag} ${BOOLEAN_FLAGS.has(flag.replace(/^-+/, '')) ? 'takes no value' : 'needs a value'} ("${command}")`);
    throw new UsageError(message);
  }
}

/** One parsed command and what its action needs: the vault, the admin actions, output and secrets. */
interface VaultCommand {
  readonly group: string;
  readonly action: string | undefined;
  readonly values: Record<string, string | boolean | undefined>;
  /** The id the action names (its first positional), if any. */
  readonly id: string | undefined;
  readonly io: CliIo;
  readonly service: VaultService;
  readonly actions: VirtualKeyActions;
  readonly print: (value: unknown) => void;
  /** A secret read from stdin: a prompt without echo at a terminal. */
  readonly fromStdin: (label: string) => Promise<string>;
  /** A secret from stdin (--stdin), else GATEWAY_PROVIDER_KEY, else a prompt at a terminal. */
  readonly secret: () => Promise<string | undefined>;
  /** The id the action names, or a usage error. */
  readonly needId: () => string;
  /** Notes a change the action made, recorded in the audit trail once it is done. */
  readonly note: (change: NotedChange) => void;
}

/** The audit target type of each command group. */
const TARGET_TYPE: Readonly<Record<string, string>> = { credentials: 'credential', keys: 'virtual-key', 'rotate-master-key': 'master-key' };

export async function runVaultCli(argv: readonly string[], gatewayConfig: GatewayConfig, io: CliIo): Promise<number> {
  const [group, action, ...rest] = argv;
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseAction(group, action, rest));
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n\n${COMMAND_HELP[group] ?? GENERAL_HELP}\n`);
    return 2;
  }

  const config = resolveConfig(gatewayConfig, io.environment);
  const service = cliVaultService(config, io.environment);
  const actions = new VirtualKeyActions({
    service,
    customHosts: new CustomHostGuard(config.customHosts),
    providerIds: () => config.providers.map((provider) => provider.manifest.id),
    policyExists: (name) => Object.hasOwn(config.policies, name) && config.policies[name] !== undefined,
    configRoutes: config.routes,
  });
  const json = values.json === true || (io.output ?? 'json') === 'json';
  const fromStdin = (label: string): Promise<string> => {
    const terminal = io.stdin as NodeJS.ReadStream;
    return terminal.isTTY && typeof terminal.setRawMode === 'function' ? promptHidden(terminal, io.stderr, label) : readStdin(io.stdin);
  };
  const id = positionals[0];
  const changes: NotedChange[] = [];
  const command: VaultCommand = {
    group,
    action,
    values,
    id,
    io,
    service,
    actions,
    print: (value: unknown) => io.stdout.write(`${json ? JSON.stringify(value, null, 2) : humanOutput(value)}\n`),
    fromStdin,
    secret: async (): Promise<string | undefined> => {
      if (values.stdin) return fromStdin('secret (typed, not shown): ');
      if (io.environment.GATEWAY_PROVIDER_KEY !== undefined) return io.environment.GATEWAY_PROVIDER_KEY;
      return (io.stdin as NodeJS.ReadStream).isTTY ? fromStdin('secret (typed, not shown): ') : undefined;
    },
    needId: () => {
      if (!id) throw new UsageError(`${group} ${action} needs an id`);
      return id;
    },
    note: (change) => changes.push(change),
  };

  try {
    await service.start();
    await runCommand(command, argv);
  } catch (error) {
    const audited = changingAction(group, action);
    if (audited !== undefined && !(error instanceof UsageError)) {
      const failed = { action: audited, ...(id ? { target: { type: TARGET_TYPE[group], id } } : {}) };
      await recordCliChanges(config, [failed], 'failure').catch((problem: Error) => io.stderr.write(`warning: the failure was not recorded in the audit trail: ${problem.message}\n`));
    }
    return failure(error, group, json, io);
  } finally {
    await service.close();
  }
  try {
    await recordCliChanges(config, changes, 'success');
    return 0;
  } catch (error) {
    io.stderr.write(`error: the change was made, but the audit trail could not record it: ${(error as Error).message}\n`);
    return 1;
  }
}

/** Prints why a command failed and returns its exit code: 2 for a usage error (with the command's usage), else 1. */
function failure(error: unknown, group: string, json: boolean, io: CliIo): number {
  if (error instanceof UsageError) {
    io.stderr.write(`${error.message}\n\n${COMMAND_HELP[group] ?? GENERAL_HELP}\n`);
    return 2;
  }
  if (error instanceof GatewayError) {
    const message = json ? `${error.body.message}${error.body.param ? ` (${error.body.param})` : ''}` : flagMessage(error);
    io.stderr.write(`error: ${message}\n`);
    return 1;
  }
  io.stderr.write(`error: ${(error as Error).message}\n`);
  return 1;
}

/** Runs one command on the started vault. */
async function runCommand(command: VaultCommand, argv: readonly string[]): Promise<void> {
  const { group, action, values, id, io, actions, print, needId } = command;
  switch (group === 'rotate-master-key' ? group : `${group} ${action === 'show' ? 'get' : action}`) {
    case 'credentials create': {
      const body: Record<string, unknown> = { name: values.name, ...(values.provider ? { provider: values.provider } : {}) };
      if (values.json) Object.assign(body, await jsonSecret(io.stdin));
      else body.api_key = await command.secret();
      const created = await actions.createCredential(body);
      command.note(noted('credentials.create', { type: 'credential', id: created.id }, undefined, created));
      print(created);
      break;
    }
    case 'credentials list':
      print(await actions.listCredentials());
      break;
    case 'credentials rotate': {
      const credential = needId();
      const body = values.json ? await jsonSecret(io.stdin) : { api_key: await command.secret() };
      print(await actions.rotateCredential(credential, body));
      command.note(noted('credentials.rotate', { type: 'credential', id: credential }));
      io.stderr.write('The credential keeps its id: the keys and routes using it send the new secret from their next request.\n');
      break;
    }
    case 'credentials delete':
      await actions.deleteCredential(needId());
      command.note(noted('credentials.delete', { type: 'credential', id: needId() }));
      print({ deleted: id });
      break;
    case 'keys create': {
      const created = await actions.createKey(await keyCreateBody(command));
      command.note(noted('keys.create', { type: 'virtual-key', id: created.id }, undefined, created));
      print(created);
      io.stderr.write('The key value ("key") is shown this once; store it now.\n');
      break;
    }
    case 'keys update':
      await updateKey(command);
      break;
    case 'keys list':
      print(await actions.listKeys());
      break;
    case 'keys get':
      print(await actions.getKey(needId()));
      break;
    case 'keys usage':
      print(await actions.usage(needId()));
      break;
    case 'keys rotate':
      print(await actions.rotateKey(needId()));
      command.note(noted('keys.rotate', { type: 'virtual-key', id: needId() }));
      io.stderr.write('The new key value ("key") is shown this once; the old one is refused from now on.\n');
      break;
    case 'keys delete':
      await actions.deleteKey(needId());
      command.note(noted('keys.delete', { type: 'virtual-key', id: needId() }));
      print({ deleted: id });
      break;
    case 'rotate-master-key':
      await rotateMasterKey(command);
      break;
    default:
      throw new UsageError(`unknown command "${argv.join(' ')}"`);
  }
}

/** The admin API body of `keys create`, from its flags (the provider key from the secret when no credential is named). */
async function keyCreateBody({ values, secret }: VaultCommand): Promise<Record<string, unknown>> {
  const limits = Object.fromEntries(
    Object.entries({
      budget_usd: number(values['budget-usd'] as string | undefined, '--budget-usd'),
      budget_period: values['budget-period'],
      requests_per_minute: number(values.rpm as string | undefined, '--rpm'),
      requests_per_day: number(values.rpd as string | undefined, '--rpd'),
      allowed_users: list(values.users as string | undefined),
      allowed_models: list(values.models as string | undefined),
    }).filter(([, value]) => value !== undefined),
  );
  return Object.fromEntries(
    Object.entries({
      name: values.name,
      provider: values.provider,
      credential_id: values.credential,
      provider_key: values.credential ? undefined : await secret(),
      custom_host: values['custom-host'],
      allowed_routes: list(values.routes as string | undefined),
      guardrail_policy: values.policy,
      limits: Object.keys(limits).length ? limits : undefined,
      expires_at: values['expires-at'],
      log_bodies: values['no-log-bodies'] ? false : undefined,
    }).filter(([, value]) => value !== undefined),
  );
}

/** `keys update`: the flags given change those fields of the key (`none` removes an optional one). */
async function updateKey({ values, actions, print, fromStdin, needId, note }: VaultCommand): Promise<void> {
  const current = await actions.getKey(needId());
  const body: Record<string, unknown> = Object.fromEntries(
    Object.entries({
      name: values.name,
      credential_id: values.credential,
      provider_key: values.stdin ? await fromStdin('new provider key (typed, not shown): ') : undefined,
      custom_host: clearable(values['custom-host']),
      guardrail_policy: clearable(values.policy),
      // Replaced whole, as the admin API does; none removes every grant.
      allowed_routes: values.routes === NONE ? null : list(values.routes as string | undefined),
      expires_at: clearable(values['expires-at']),
      limits: updatedLimits(current.limits, values),
      log_bodies: values['no-log-bodies'] ? false : values['log-bodies'] ? true : undefined,
    }).filter(([, value]) => value !== undefined),
  );
  if (values['no-log-bodies'] && values['log-bodies']) throw new UsageError('give --log-bodies or --no-log-bodies, not both');
  if (Object.keys(body).length === 0) throw new UsageError('keys update needs at least one flag to change');
  const updated = await actions.updateKey(current.id, body);
  note(noted('keys.update', { type: 'virtual-key', id: current.id }, current, updated));
  print(updated);
}

/** `rotate-master-key`: re-wraps every stored credential under a new master key, saying how far it is. */
async function rotateMasterKey({ io, service, print, note }: VaultCommand): Promise<void> {
  const result = await withProgress(io.stderr, `re-wrapping ${(await service.credentials.list()).length} stored credentials under a new master key`, () => service.rotateMasterKey());
  note({ action: 'master-key.rotate', target: { type: 'master-key', id: result.activeKeyId }, changes: { rewrapped: { after: result.rewrapped } } });
  print({ master_key_id: result.activeKeyId, rewrapped: result.rewrapped, source: result.mode, still_in_use: result.retained });
  if (result.retained.length > 0) {
    io.stderr.write(`Some records are still wrapped by master key ids ${result.retained.join(', ')} (written during the rotation): they were kept; run rotate-master-key again.\n`);
  } else if (result.mode === 'env') {
    io.stderr.write('Every record is now wrapped by the first key of GATEWAY_MASTER_KEY; remove the old key from it.\n');
  }
}

/**
 * Runs a slow task, saying on stderr what it does, then every second how long it has run, then
 * when it is done: a rotation over many records takes a while.
 */
async function withProgress<T>(stderr: NodeJS.WritableStream, label: string, task: () => Promise<T>): Promise<T> {
  const started = Date.now();
  stderr.write(`${label}…\n`);
  const ticker = setInterval(() => stderr.write(`  still working (${Math.round((Date.now() - started) / 1000)} s)\n`), 1000);
  try {
    return await task();
  } finally {
    clearInterval(ticker);
    stderr.write(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
}
