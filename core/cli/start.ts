import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type GatewayConfig, resolveConfig } from '../../config/index.js';
import { AccountKey } from '../identity/account-key.js';
import { BootError } from '../errors.js';
import { workerCount } from '../cluster/primary.js';
import { providerBanner } from '../registry.js';
import { treatAsOperatorModule } from './config-modules.js';
import type { CliIo } from './vault.js';

/**
 * The shipped `gateway.config.ts`, or the file `--config` / `GATEWAY_CONFIG` names (TypeScript or
 * JavaScript, anywhere; Node 24 strips a .ts file's types on import, so no build step). A user file
 * imports `defineConfig` and plugins through the package's exports (`llm-gateway`,
 * `llm-gateway/guardrails`). The file and the files it imports outside node_modules are ES modules
 * whatever the nearest package.json's `"type"` (config-modules.ts).
 */
export async function loadConfig(path: string | undefined, source = `GATEWAY_CONFIG=${path}`): Promise<GatewayConfig> {
  if (!path) return (await import('../../gateway.config.js')).default;
  let loaded: { default?: unknown };
  try {
    const url = pathToFileURL(resolve(path)).href;
    treatAsOperatorModule(url);
    loaded = await import(url);
  } catch (error) {
    throw new BootError('INVALID_CONFIG', `${source} could not be loaded: ${(error as Error).message}`);
  }
  if (typeof loaded.default !== 'object' || loaded.default === null) {
    throw new BootError('INVALID_CONFIG', `${source} must export its configuration as default (export default defineConfig({ ... }))`);
  }
  return loaded.default as GatewayConfig;
}

/** How long SIGINT/SIGTERM lets requests in flight (long streams included) finish. */
function shutdownGraceMs(environment: NodeJS.ProcessEnv): number {
  const setting = Number(environment.GATEWAY_SHUTDOWN_GRACE_MS ?? 30_000);
  return Number.isFinite(setting) && setting >= 0 ? setting : 30_000;
}

/**
 * Serves the gateway configured by `config` on HOST:PORT until SIGINT/SIGTERM, which let requests
 * in flight finish. Start-up fails with a message naming the plugin or setting at fault.
 */
export async function startGateway(config: GatewayConfig, io: CliIo): Promise<void> {
  const cluster = (await import('node:cluster')).default;
  const workers = workerCount(io.environment.GATEWAY_WORKERS, availableParallelism());
  if (workers > 1 && cluster.isPrimary) {
    const { dataDir, redisUrl } = resolveConfig(config, io.environment);
    const { runPrimary } = await import('../cluster/primary.js');
    try {
      await runPrimary({ workers, dataDir, redisUrl, io });
    } catch (error) {
      throw new BootError('INVALID_CONFIG', (error as Error).message);
    }
    return;
  }
  const { createGateway } = await import('../app.js');
  const gateway = createGateway(config);
  const { primaryChannel, workerId, clusterMetrics } = await import('../cluster/worker.js');
  const primary = primaryChannel();
  if (primary) gateway.metrics.renderWith(clusterMetrics(gateway.metrics.registry, primary));
  const { url } = await gateway.listen();
  // Of several workers, the first prints what a start prints (the others start once it listens).
  if ((workerId() ?? 1) > 1) {
    onSignals(gateway, io);
    return;
  }
  const logs = gateway.config.logs.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `SQLite (${gateway.config.dataDir}/logs.db)`;
  io.stdout.write(`gateway listening on ${url}\n${providerBanner(gateway.registry.list().providers)}request logs: ${logs}\ndashboard: ${url}/dashboard\n`);
  if (gateway.generatedAccountKey) {
    io.stdout.write(
      `\nA new account API key was generated (only its hash is stored in ${gateway.config.dataDir}/account-key.json).\n` +
        `It is shown this once; send it as x-gateway-api-key:\n\n  ${gateway.generatedAccountKey}\n\n`,
    );
  }
  onSignals(gateway, io);
}

/** SIGINT/SIGTERM (either, once) let requests in flight finish, then end the process. */
function onSignals(gateway: { close(graceMs: number): Promise<void> }, io: CliIo): void {
  const graceMs = shutdownGraceMs(io.environment);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    io.stdout.write(`shutting down: requests in flight get up to ${graceMs / 1000} s\n`);
    gateway.close(graceMs).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/**
 * Replaces the data dir's account key with a new one, printed once, and stores its hash only after
 * printing it. Refused while GATEWAY_API_KEY is set: that key, not the stored one, is then in force.
 */
export function resetAccountKey(config: GatewayConfig, io: CliIo, json: boolean): number {
  const { dataDir, accountKey } = resolveConfig(config, io.environment);
  if (accountKey) {
    io.stderr.write('GATEWAY_API_KEY is set, so the stored account key is not used: change GATEWAY_API_KEY instead, or unset it and run this again.\n');
    return 1;
  }
  const key = AccountKey.generate();
  if (json) {
    io.stdout.write(`${JSON.stringify({ account_key: key, stored_in: `${dataDir}/account-key.json` }, null, 2)}\n`);
  } else {
    io.stdout.write(
      `A new account API key (only its hash is stored, in ${dataDir}/account-key.json; the previous key stops working\n` +
        `when the gateway next starts). It is shown this once; send it as x-gateway-api-key:\n\n  ${key}\n\n`,
    );
  }
  AccountKey.store(dataDir, key);
  return 0;
}
