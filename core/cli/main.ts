import { BootError } from '../errors.js';
import { COMMAND_HELP, GENERAL_HELP } from './help.js';
import { didYouMean } from './suggest.js';
import type { CliIo } from './vault.js';

/** The options every command takes, taken out of argv before the command parses the rest. */
interface GlobalOptions {
  readonly command: string | undefined;
  readonly rest: string[];
  readonly configPath: string | undefined;
  readonly json: boolean;
  readonly help: boolean;
}

class UsageError extends Error {}

/** The commands that take no flag of their own (only --config, --json and --help). */
const NO_FLAGS = { start: true, doctor: true, 'reset-account-key': true, routes: true } as const;

function globalOptions(argv: readonly string[]): GlobalOptions {
  const [command, ...others] = argv;
  const rest: string[] = [];
  let configPath: string | undefined;
  let help = false;
  for (let index = 0; index < others.length; index++) {
    const argument = others[index];
    if (argument === '--help' || argument === '-h') help = true;
    else if (argument === '--config') {
      configPath = others[++index];
      if (configPath === undefined || configPath.startsWith('-')) throw new UsageError('--config needs a file: --config ./gateway.config.ts');
    } else if (argument.startsWith('--config=')) configPath = argument.slice('--config='.length);
    else rest.push(argument);
  }
  return { command, rest, configPath, json: rest.includes('--json'), help };
}

/** Why the server could not listen, in a sentence with the fix (no stack), or undefined for any other error. */
function listenProblem(error: unknown): string | undefined {
  const { code, address, port } = (error ?? {}) as NodeJS.ErrnoException & { address?: string; port?: number };
  const where = address === undefined ? 'the address' : `${address}:${port}`;
  if (code === 'EADDRINUSE') return `${where} is already in use (EADDRINUSE): stop what listens there, or set PORT (and HOST) to a free address`;
  if (code === 'EACCES') return `${where} may not be opened by this user (EACCES): a port below 1024 needs privileges; set PORT to 1024 or above`;
  if (code === 'EADDRNOTAVAIL') return `${where} is not an address of this machine (EADDRNOTAVAIL): set HOST to one of its addresses, or 0.0.0.0`;
  return undefined;
}

/**
 * The `llm-gateway` command: `start`, `keys`, `credentials`, `rotate-master-key`,
 * `reset-account-key`, `doctor`, `audit`. Returns the exit code: 0, 1 when the command failed, 2 for a
 * command line it does not understand. `start` resolves once the gateway listens.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let options: GlobalOptions;
  try {
    options = globalOptions(argv);
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  const { command, rest, json, help } = options;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    const topic = command === 'help' ? rest[0] : undefined;
    io.stdout.write(`${(topic && COMMAND_HELP[topic]) || GENERAL_HELP}\n`);
    return 0;
  }
  if (!Object.hasOwn(COMMAND_HELP, command)) {
    io.stderr.write(`unknown command "${command}"${didYouMean(command, Object.keys(COMMAND_HELP))}\n\n${GENERAL_HELP}\n`);
    return 2;
  }
  if (help) {
    io.stdout.write(`${COMMAND_HELP[command]}\n`);
    return 0;
  }
  // keys, credentials and rotate-master-key check their flags per action (vault.ts); the others take only the global ones.
  if (Object.hasOwn(NO_FLAGS, command)) {
    const unknown = rest.find((argument) => argument.startsWith('-') && argument !== '-' && argument !== '--json');
    if (unknown !== undefined) {
      io.stderr.write(`unknown option ${unknown} for "${command}"\n\n${COMMAND_HELP[command]}\n`);
      return 2;
    }
  }
  if ((command === 'keys' || command === 'credentials') && (rest[0] === undefined || rest[0].startsWith('-'))) {
    io.stderr.write(`${command} needs an action\n\n${COMMAND_HELP[command]}\n`);
    return 2;
  }
  const configPath = options.configPath ?? io.environment.GATEWAY_CONFIG;
  // Errors about the file name the way it was given: the flag, or the variable.
  const configSource = options.configPath === undefined ? `GATEWAY_CONFIG=${configPath}` : `--config ${configPath}`;
  if (command === 'doctor') {
    const { runDoctor } = await import('./doctor.js');
    return runDoctor({ configPath, configSource, json, io });
  }
  try {
    const { loadConfig, startGateway, resetAccountKey } = await import('./start.js');
    const config = await loadConfig(configPath, configSource);
    if (command === 'start') {
      await startGateway(config, io);
      return 0;
    }
    if (command === 'reset-account-key') {
      const code = resetAccountKey(config, io, json);
      return code === 0 ? (await import('./vault-audit.js')).recordHostChange(config, io, { action: 'account-key.reset', target: { type: 'account-key', id: 'account' } }) : code;
    }
    if (command === 'routes') return (await import('./routes.js')).runRoutesCli(rest, config, io, json);
    if (command === 'org') return (await import('./org.js')).runOrgCli(rest, config, io, json);
    if (command === 'audit') return await (await import('./audit.js')).runAuditCli(rest, config, io, json);
    if (command === 'import') return (await import('./import.js')).runImportCli(rest, config, io, json);
    const { runVaultCli } = await import('./vault.js');
    return await runVaultCli([command, ...rest], config, { ...io, output: json ? 'json' : 'human' });
  } catch (error) {
    const message = error instanceof BootError ? error.message : (listenProblem(error) ?? (error as Error)?.stack ?? String(error));
    io.stderr.write(command === 'start' ? `gateway failed to start: ${message}\n` : `error: ${message}\n`);
    return 1;
  }
}
