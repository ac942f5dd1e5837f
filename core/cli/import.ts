import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { type GatewayConfig, resolveConfig } from '../../config/index.js';
import { RouteActions } from '../admin/route-actions.js';
import { VirtualKeyActions } from '../admin/virtual-key-actions.js';
import { GatewayError } from '../errors.js';
import { CustomHostGuard } from '../http/custom-host.js';
import { COMMAND_HELP } from './help.js';
import { litellmPlan, litellmProviders } from './import-litellm.js';
import type { ImportPlan } from './import-plan.js';
import { portkeyPlan } from './import-portkey.js';
import { type CliIo, cliVaultService } from './vault.js';

/** What was stored, by name and id (never a secret). */
interface Imported {
  readonly credentials: Array<{ name: string; id: string; rotated: boolean }>;
  readonly routes: Array<{ name: string; id: string; replaced: boolean }>;
  readonly aliases: Array<{ alias: string; route: string }>;
  readonly failed: string[];
}

/**
 * The credentials the stored routes of the plan's names use, by name: what a previous import of the
 * same config stored. Only those are reused (rotated), never another credential that shares a name.
 */
async function previousCredentials(plan: ImportPlan, service: ReturnType<typeof cliVaultService>): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const { name } of plan.routes) {
    const stored = await service.parts.routes.route(name);
    if (!stored) continue;
    for (const match of JSON.stringify(stored.route).matchAll(/"credential":"([^"]+)"/g)) {
      const record = await service.credentials.get(match[1]);
      if (record && !found.has(record.name)) found.set(record.name, record.id);
    }
  }
  return found;
}

/** A route with every credential reference replaced by the stored credential's id. */
function withCredentialIds(value: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((entry) => withCredentialIds(entry, ids));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([field, entry]) => [field, field === 'credential' && typeof entry === 'string' ? (ids.get(entry) ?? entry) : withCredentialIds(entry, ids)]));
}

const reason = (error: unknown): string => (error instanceof GatewayError ? error.body.message : (error as Error).message);

/**
 * Why a file could not be parsed, without quoting it: JSON.parse and the YAML parser put an excerpt
 * of the text in their messages, and the text may hold a secret. Only the place is told.
 */
function parseProblem(error: unknown): string {
  const { code, linePos } = error as { code?: string; linePos?: Array<{ line: number; col: number }> };
  if (linePos?.[0]) return `${code ?? 'invalid YAML'} at line ${linePos[0].line}, column ${linePos[0].col}`;
  if (error instanceof SyntaxError) return 'not valid JSON';
  return (error as Error).message.split('\n')[0];
}

/**
 * Stores a plan through the admin API's own actions (the same checks): its credentials, then each
 * route (a stored route of the same name is replaced: importing again updates it), then the
 * aliases. A credential no stored route names in the end is deleted again.
 */
async function store(plan: ImportPlan, config: ReturnType<typeof resolveConfig>, io: CliIo): Promise<Imported> {
  const service = cliVaultService(config, io.environment);
  const providerIds = () => config.providers.map((provider) => provider.manifest.id);
  const keys = new VirtualKeyActions({
    service,
    customHosts: new CustomHostGuard(config.customHosts),
    providerIds,
    policyExists: (name) => Object.hasOwn(config.policies, name),
    configRoutes: config.routes,
  });
  const routes = new RouteActions({ service, providerIds });
  const imported: Imported = { credentials: [], routes: [], aliases: [], failed: [] };
  await service.start();
  try {
    const ids = new Map<string, string>();
    const reusable = await previousCredentials(plan, service);
    const createdNow = new Set<string>();
    for (const { reference, name, provider, api_key: apiKey, fields } of plan.credentials) {
      const secret = { ...(apiKey !== undefined ? { api_key: apiKey } : {}), ...(fields ? { fields } : {}) };
      const previous = reusable.get(name);
      // Importing again rotates the credential the previous import stored for this name: no orphan.
      const id = previous !== undefined ? ((await keys.rotateCredential(previous, secret)) as { id: string }).id : ((await keys.createCredential({ name, provider, ...secret })) as { id: string }).id;
      if (previous === undefined) createdNow.add(id);
      ids.set(reference, id);
      imported.credentials.push({ name, id, rotated: previous !== undefined });
    }
    const used = new Set<string>();
    for (const { name, route } of plan.routes) {
      const body = { name, route: withCredentialIds(route, ids) };
      try {
        const existing = await service.parts.routes.route(name);
        const stored = (existing ? await routes.replace(existing.id, body) : await routes.create(body)) as { id: string; route: unknown };
        imported.routes.push({ name, id: stored.id, replaced: existing !== undefined });
        for (const match of JSON.stringify(body.route).matchAll(/"credential":"([^"]+)"/g)) used.add(match[1]);
      } catch (error) {
        imported.failed.push(`route ${name}: ${reason(error)}`);
      }
    }
    for (const { alias, route } of plan.aliases) {
      if (!imported.routes.some((stored) => stored.name === route)) continue;
      try {
        await routes.setAlias(alias, { route_id: route });
        imported.aliases.push({ alias, route });
      } catch (error) {
        imported.failed.push(`alias ${alias}: ${reason(error)}`);
      }
    }
    for (const credential of imported.credentials.filter((entry) => !used.has(entry.id) && createdNow.has(entry.id))) await service.credentials.delete(credential.id);
    imported.credentials.splice(0, imported.credentials.length, ...imported.credentials.filter((entry) => used.has(entry.id)));
    return imported;
  } finally {
    await service.close();
  }
}

function report(plan: ImportPlan, imported: Imported, io: CliIo, json: boolean): void {
  if (json) {
    io.stdout.write(`${JSON.stringify({ ...imported, not_carried: plan.notCarried }, null, 2)}\n`);
    return;
  }
  const lines = [
    ...imported.credentials.map(({ name, id, rotated }) => `${rotated ? 'rotated' : 'stored'} credential ${name} (${id})`),
    ...imported.routes.map(({ name, id, replaced }) => `${replaced ? 'replaced' : 'stored'} route ${name} (${id})`),
    ...imported.aliases.map(({ alias, route }) => `alias ${alias} → route ${route}`),
    ...plan.notCarried.map((line) => `not carried: ${line}`),
    ...imported.failed.map((line) => `not imported: ${line}`),
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
}

/** What one source format of `llm-gateway import <format>` needs: how its file is read into a plan. */
interface ImportFormat {
  /** How errors name what the file should have been. */
  readonly describes: string;
  /** Whether `--name <route>` applies (a format whose file holds one route). */
  readonly named: boolean;
  plan(text: string, context: { file: string; name?: string; config: ReturnType<typeof resolveConfig>; environment: NodeJS.ProcessEnv }): Promise<ImportPlan> | ImportPlan;
}

/** The other gateways' configuration formats the command reads, by the name the command takes. */
const FORMATS: Readonly<Record<string, ImportFormat>> = {
  portkey: {
    describes: 'Portkey config (JSON)',
    named: true,
    plan: (text, { file, name, config }) =>
      portkeyPlan(JSON.parse(text), name ?? basename(file, extname(file)), new Set(config.providers.map((provider) => provider.manifest.id))),
  },
  litellm: {
    describes: 'LiteLLM config (YAML)',
    named: false,
    plan: async (text, { config, environment }) => litellmPlan((await import('yaml')).parse(text), litellmProviders(config.providers), environment),
  },
};

/**
 * `llm-gateway import portkey <file.json> [--name <route>]` and `llm-gateway import litellm
 * <config.yaml>`: translate another gateway's configuration, store it where the running gateway
 * reads it (the data dir, or Redis with REDIS_URL), and print what was stored and each field that
 * could not be carried over (never a secret). Exit 0 when something was imported, 1 when nothing
 * was, 2 for a command line it does not understand.
 */
export async function runImportCli(argv: readonly string[], gatewayConfig: GatewayConfig, io: CliIo, json: boolean): Promise<number> {
  const args = argv.filter((entry) => entry !== '--json');
  const nameAt = args.indexOf('--name');
  const name = nameAt >= 0 ? args[nameAt + 1] : undefined;
  const positional = args.filter((_, index) => nameAt < 0 || (index !== nameAt && index !== nameAt + 1));
  const [kind, file] = positional;
  const format = kind !== undefined && Object.hasOwn(FORMATS, kind) ? FORMATS[kind] : undefined;
  if (format === undefined || file === undefined || positional.length > 2 || (nameAt >= 0 && (name === undefined || !format.named))) {
    io.stderr.write(`${COMMAND_HELP.import}\n`);
    return 2;
  }
  const config = resolveConfig(gatewayConfig, io.environment);
  let plan: ImportPlan;
  try {
    plan = await format.plan(readFileSync(file, 'utf8'), { file, ...(name !== undefined ? { name } : {}), config, environment: io.environment });
  } catch (error) {
    io.stderr.write(`error: ${file} could not be read as a ${format.describes}: ${parseProblem(error)}\n`);
    return 1;
  }
  const imported = await store(plan, config, io);
  report(plan, imported, io, json);
  return imported.routes.length > 0 ? 0 : 1;
}
