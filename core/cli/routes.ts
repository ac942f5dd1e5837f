import { readFileSync } from 'node:fs';
import { type GatewayConfig, resolveConfig } from '../../config/index.js';
import { GatewayError } from '../errors.js';
import { parseRoute, type Route, type Target } from '../routing/route.js';
import type { StoredRoute } from '../routing/sources.js';
import { withShownRoute } from '../admin/route-keys.js';
import { COMMAND_HELP } from './help.js';
import { didYouMean } from './suggest.js';
import { type CliIo, cliVaultService } from './vault.js';

async function readAll(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Every target of a route, nested routes' included, with its path. */
function targetsOf(route: Route, path = 'route'): Array<{ path: string; target: Target }> {
  return route.targets.flatMap((target, index) => {
    const here = `${path}.targets[${index}]`;
    return target.route ? targetsOf(target.route, `${here}.route`) : [{ path: here, target }];
  });
}

/** A one-line description of a checked route, for people. */
function describe(route: Route): string {
  // A key given by value (routes check) is named by its prefix only.
  const keyOf = (reference: string) => (reference.startsWith('vk-') ? 'virtual key vk-…' : `virtual key ${reference}`);
  const targets = targetsOf(route).map(({ target }) => `${target.name ?? '(unnamed)'} → ${target.provider ?? (target.virtual_key !== undefined ? keyOf(target.virtual_key) : 'credential')}`);
  return `route ok: ${route.strategy.mode}, ${targets.length} target${targets.length === 1 ? '' : 's'} (${targets.join(', ')})`;
}


/**
 * `llm-gateway routes`: `check <file | ->` validates a route (the `x-gateway-config` shape) with
 * the gateway's own validator and checks that every provider it names is configured; `list`,
 * `show` and `versions` read the stored routes (`/admin/routes`) from the state store.
 */
export async function runRoutesCli(argv: readonly string[], config: GatewayConfig, io: CliIo, json: boolean): Promise<number> {
  const [action, argument] = argv.filter((entry) => entry !== '--json');
  if (action === 'check' && argument !== undefined) return checkRoute(argument, config, io, json);
  if (action === 'list' || ((action === 'show' || action === 'versions') && argument !== undefined)) return readStored(action, argument, config, io, json);
  const known = ['check', 'list', 'show', 'versions'];
  const problem = action === undefined ? 'routes needs an action' : known.includes(action) ? `routes ${action} needs ${action === 'check' ? 'a file (or - for stdin)' : 'an id or name'}` : `unknown action "routes ${action}"${didYouMean(action, known)}`;
  io.stderr.write(`${problem}\n\n${COMMAND_HELP.routes}\n`);
  return 2;
}

/** One stored route as a line for people. */
const line = (stored: StoredRoute): string =>
  `${stored.id}  ${stored.name ?? '-'}  v${stored.version}  ${describe(stored.route).replace(/^route ok: /, '')}  (updated ${stored.updated_at})`;

async function readStored(action: 'list' | 'show' | 'versions', idOrName: string | undefined, gatewayConfig: GatewayConfig, io: CliIo, json: boolean): Promise<number> {
  const service = cliVaultService(resolveConfig(gatewayConfig, io.environment), io.environment);
  try {
    await service.start();
    const store = service.parts.routes;
    // Virtual keys by id and hint, as the admin API shows them.
    const shown = (stored: StoredRoute) => withShownRoute(stored, service.parts.keys);
    if (action === 'list') {
      const routes = await Promise.all((await store.list()).map(shown));
      io.stdout.write(json ? `${JSON.stringify({ data: routes }, null, 2)}\n` : routes.length === 0 ? 'no stored routes\n' : `${routes.map(line).join('\n')}\n`);
      return 0;
    }
    const found = await store.route(idOrName!);
    if (!found) {
      const names = (await store.list()).flatMap((stored) => (stored.name ? [stored.name, stored.id] : [stored.id]));
      const suggestion = didYouMean(idOrName!, names);
      io.stderr.write(`error: no stored route with the id or name "${idOrName}"${suggestion || ' (routes list shows them)'}\n`);
      return 1;
    }
    const current = await shown(found);
    if (action === 'show') {
      io.stdout.write(json ? `${JSON.stringify(current, null, 2)}\n` : `${line(current)}\n${JSON.stringify(current.route, null, 2)}\n`);
      return 0;
    }
    const versions = await Promise.all((await store.versions(current.id)).map(shown));
    io.stdout.write(json ? `${JSON.stringify({ data: versions }, null, 2)}\n` : `${versions.map(line).join('\n')}\n`);
    return 0;
  } finally {
    await service.close();
  }
}

async function checkRoute(file: string, config: GatewayConfig, io: CliIo, json: boolean): Promise<number> {
  let value: unknown;
  try {
    value = JSON.parse(file === '-' ? await readAll(io.stdin) : readFileSync(file, 'utf8'));
  } catch (error) {
    io.stderr.write(`error: ${file === '-' ? 'stdin' : file} is not a readable JSON file: ${(error as Error).message}\n`);
    return 1;
  }
  try {
    const route = parseRoute(value, 'route');
    const configured = new Set(config.providers.map((provider) => provider.manifest.id));
    const unknown = targetsOf(route).find(({ target }) => target.provider !== undefined && !configured.has(target.provider));
    if (unknown) {
      io.stderr.write(`error: ${unknown.path}.provider names "${unknown.target.provider}", which is not configured (providers: ${[...configured].join(', ')})\n`);
      return 1;
    }
    io.stdout.write(json ? `${JSON.stringify({ valid: true, route }, null, 2)}\n` : `${describe(route)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    io.stderr.write(`error: ${error.body.message}\n`);
    return 1;
  }
}
