import { parseArgs } from 'node:util';
import type { GatewayConfig, ResolvedConfig } from '../../config/index.js';
import { resolveConfig } from '../../config/index.js';
import { VirtualKeyActions } from '../admin/virtual-key-actions.js';
import { GatewayError } from '../errors.js';
import { CustomHostGuard } from '../http/custom-host.js';
import { VaultService } from '../vault/service.js';

export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Read when a command takes a secret with `--stdin`; at a terminal, a prompt without echo. */
  readonly stdin: NodeJS.ReadableStream;
  readonly environment: NodeJS.ProcessEnv;
  /** `human` (the `llm-gateway` command's default) or `json` (the default here, and `--json`). */
  readonly output?: 'human' | 'json';
}

export const CLI_USAGE = `usage: llm-gateway <command>
  credentials create --name <name> [--provider <id>] [--stdin] [--json]
        the secret comes from GATEWAY_PROVIDER_KEY, or stdin with --stdin; with --json stdin is
        {"api_key": "...", "fields": {...}} (a structured credential)
  credentials list
  credentials delete <id>
  keys create --name <name> --provider <id> [--credential <id> | --stdin] [--custom-host <url>]
        [--policy <name>] [--budget-usd <n>] [--budget-period total|day|month] [--rpm <n>] [--rpd <n>]
        [--users a,b] [--models a,b] [--routes a,b] [--expires-at <iso time>] [--no-log-bodies]
        --routes grants routes (stored route ids or names, config route names) the key may name
        in x-gateway-config; --no-log-bodies keeps the key's request and response bodies out of the request log
        without --credential the provider key comes from GATEWAY_PROVIDER_KEY, or stdin with --stdin
  keys list | keys get <id> | keys usage <id> | keys rotate <id> | keys delete <id>
  rotate-master-key
llm-gateway <command> --help tells more.
Secrets are never read from the command line. With the embedded store, a running gateway sees
changes made here within 30 s (the admin API applies them at once).`;

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

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

export async function runVaultCli(argv: readonly string[], gatewayConfig: GatewayConfig, io: CliIo): Promise<number> {
  const [group, action, ...rest] = argv;
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: group === 'rotate-master-key' ? [action, ...rest].filter((entry) => entry !== undefined) : rest,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        provider: { type: 'string' },
        credential: { type: 'string' },
        'custom-host': { type: 'string' },
        policy: { type: 'string' },
        'budget-usd': { type: 'string' },
        'budget-period': { type: 'string' },
        rpm: { type: 'string' },
        rpd: { type: 'string' },
        users: { type: 'string' },
        models: { type: 'string' },
        routes: { type: 'string' },
        'expires-at': { type: 'string' },
        'no-log-bodies': { type: 'boolean' },
        stdin: { type: 'boolean' },
        json: { type: 'boolean' },
      },
    }));
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n${CLI_USAGE}\n`);
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
  const print = (value: unknown) => io.stdout.write(`${json ? JSON.stringify(value, null, 2) : humanOutput(value)}\n`);
  const fromStdin = (label: string): Promise<string> => {
    const terminal = io.stdin as NodeJS.ReadStream;
    return terminal.isTTY && typeof terminal.setRawMode === 'function' ? promptHidden(terminal, io.stderr, label) : readStdin(io.stdin);
  };
  // A secret comes from stdin (--stdin), else GATEWAY_PROVIDER_KEY, else a prompt at a terminal.
  const secret = async (): Promise<string | undefined> => {
    if (values.stdin) return fromStdin('secret (typed, not shown): ');
    if (io.environment.GATEWAY_PROVIDER_KEY !== undefined) return io.environment.GATEWAY_PROVIDER_KEY;
    return (io.stdin as NodeJS.ReadStream).isTTY ? fromStdin('secret (typed, not shown): ') : undefined;
  };
  const id = positionals[0];
  const needId = () => {
    if (!id) throw new UsageError(`${group} ${action} needs an id`);
    return id;
  };

  try {
    await service.start();
    const command = group === 'rotate-master-key' ? group : `${group} ${action === 'show' ? 'get' : action}`;
    switch (command) {
      case 'credentials create': {
        const body: Record<string, unknown> = { name: values.name, ...(values.provider ? { provider: values.provider } : {}) };
        if (values.json) Object.assign(body, JSON.parse(await readStdin(io.stdin)) as object);
        else body.api_key = await secret();
        print(await actions.createCredential(body));
        break;
      }
      case 'credentials list':
        print(await actions.listCredentials());
        break;
      case 'credentials delete':
        await actions.deleteCredential(needId());
        print({ deleted: id });
        break;
      case 'keys create': {
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
        const body: Record<string, unknown> = Object.fromEntries(
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
        const created = await actions.createKey(body);
        print(created);
        io.stderr.write('The key value ("key") is shown this once; store it now.\n');
        break;
      }
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
        io.stderr.write('The new key value ("key") is shown this once; the old one is refused from now on.\n');
        break;
      case 'keys delete':
        await actions.deleteKey(needId());
        print({ deleted: id });
        break;
      case 'rotate-master-key': {
        const result = await withProgress(io.stderr, `re-wrapping ${(await service.credentials.list()).length} stored credentials under a new master key`, () => service.rotateMasterKey());
        print({ master_key_id: result.activeKeyId, rewrapped: result.rewrapped, source: result.mode, still_in_use: result.retained });
        if (result.retained.length > 0) {
          io.stderr.write(`Some records are still wrapped by master key ids ${result.retained.join(', ')} (written during the rotation): they were kept; run rotate-master-key again.\n`);
        } else if (result.mode === 'env') {
          io.stderr.write('Every record is now wrapped by the first key of GATEWAY_MASTER_KEY; remove the old key from it.\n');
        }
        break;
      }
      default:
        throw new UsageError(`unknown command "${argv.join(' ')}"`);
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${error.message}\n${CLI_USAGE}\n`);
      return 2;
    }
    if (error instanceof GatewayError) {
      const message = json ? `${error.body.message}${error.body.param ? ` (${error.body.param})` : ''}` : flagMessage(error);
      io.stderr.write(`error: ${message}\n`);
      return 1;
    }
    io.stderr.write(`error: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await service.close();
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
