import { readFileSync } from 'node:fs';
import type { GatewayConfig } from '../../config/index.js';
import { GatewayError } from '../errors.js';
import { parseRoute, type Route, type Target } from '../routing/route.js';
import type { CliIo } from './vault.js';

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
  const targets = targetsOf(route).map(({ target }) => `${target.name ?? '(unnamed)'} → ${target.provider ?? target.virtual_key?.slice(0, 6) ?? 'credential'}`);
  return `route ok: ${route.strategy.mode}, ${targets.length} target${targets.length === 1 ? '' : 's'} (${targets.join(', ')})`;
}

/**
 * `llm-gateway routes check <file | ->`: validates a route (the `x-gateway-config` shape) with the
 * gateway's own validator, and checks that every provider it names is configured.
 */
export async function runRoutesCli(argv: readonly string[], config: GatewayConfig, io: CliIo, json: boolean): Promise<number> {
  const [action, file] = argv.filter((argument) => argument !== '--json');
  if (action !== 'check' || file === undefined) {
    io.stderr.write('usage: llm-gateway routes check <file.json | ->\n');
    return 2;
  }
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
