#!/usr/bin/env node
import { enableCompileCache } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type GatewayConfig, resolveConfig } from '../config/index.js';
import { AccountKey } from './account-key.js';
import { BootError } from './errors.js';
import { providerBanner } from './registry.js';

/**
 * The shipped `gateway.config.ts`, or the file `GATEWAY_CONFIG` names (TypeScript or JavaScript,
 * anywhere; Node 24 strips a .ts file's types on import, so no build step). A user file imports
 * `defineConfig` and plugins through the package's exports (`llm-gateway`, `llm-gateway/guardrails`).
 */
async function loadConfig(path: string | undefined): Promise<GatewayConfig> {
  if (!path) return (await import('../gateway.config.js')).default;
  let loaded: { default?: unknown };
  try {
    loaded = await import(pathToFileURL(resolve(path)).href);
  } catch (error) {
    throw new BootError('INVALID_CONFIG', `GATEWAY_CONFIG=${path} could not be loaded: ${(error as Error).message}`);
  }
  if (typeof loaded.default !== 'object' || loaded.default === null) {
    throw new BootError('INVALID_CONFIG', `GATEWAY_CONFIG=${path} must export its configuration as default (export default defineConfig({ ... }))`);
  }
  return loaded.default as GatewayConfig;
}

/** How long SIGINT/SIGTERM lets requests in flight (long streams included) finish. */
const graceSetting = Number(process.env.GATEWAY_SHUTDOWN_GRACE_MS ?? 30_000);
const SHUTDOWN_GRACE_MS = Number.isFinite(graceSetting) && graceSetting >= 0 ? graceSetting : 30_000;

/**
 * CLI entry. `start` (default) serves the gateway configured by `gateway.config.ts` on HOST:PORT.
 * Start-up fails with a message naming the plugin or setting at fault.
 */
async function main(command = 'start'): Promise<void> {
  if (command === 'credentials' || command === 'keys' || command === 'rotate-master-key') {
    const config = await loadConfig(process.env.GATEWAY_CONFIG);
    const { runVaultCli } = await import('./cli/vault.js');
    const io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, environment: process.env };
    process.exitCode = await runVaultCli(process.argv.slice(2), config, io);
    return;
  }
  if (command === 'reset-account-key') {
    process.exitCode = resetAccountKey(await loadConfig(process.env.GATEWAY_CONFIG));
    return;
  }
  if (command !== 'start') {
    process.stderr.write(`usage: node dist/core/main.js start | reset-account-key | credentials … | keys … | rotate-master-key\n`);
    process.exit(2);
  }
  const config = await loadConfig(process.env.GATEWAY_CONFIG);
  const { createGateway } = await import('./app.js');
  const gateway = createGateway(config);
  const { url } = await gateway.listen();
  const logs = gateway.config.logs.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `SQLite (${gateway.config.dataDir}/logs.db)`;
  process.stdout.write(`gateway listening on ${url}\n${providerBanner(gateway.registry.list().providers)}request logs: ${logs}\ndashboard: ${url}/dashboard\n`);
  if (gateway.generatedAccountKey) {
    process.stdout.write(
      `\nA new account API key was generated (only its hash is stored in ${gateway.config.dataDir}/account-key.json).\n` +
        `It is shown this once; send it as x-gateway-api-key:\n\n  ${gateway.generatedAccountKey}\n\n`,
    );
  }
  const stop = () => {
    process.stdout.write(`shutting down: requests in flight get up to ${SHUTDOWN_GRACE_MS / 1000} s\n`);
    gateway.close(SHUTDOWN_GRACE_MS).then(
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
function resetAccountKey(config: GatewayConfig): number {
  const { dataDir, accountKey } = resolveConfig(config, process.env);
  if (accountKey) {
    process.stderr.write('GATEWAY_API_KEY is set, so the stored account key is not used: change GATEWAY_API_KEY instead, or unset it and run this again.\n');
    return 1;
  }
  const key = AccountKey.generate();
  process.stdout.write(
    `A new account API key (only its hash is stored, in ${dataDir}/account-key.json; the previous key stops working\n` +
      `when the gateway next starts). It is shown this once; send it as x-gateway-api-key:\n\n  ${key}\n\n`,
  );
  AccountKey.store(dataDir, key);
  return 0;
}

// Node keeps the compiled code of every module it loads after this call on disk (in the OS temp
// directory) and reuses it on the next start: the gateway's imports took ~280 ms without it and
// ~220 ms with it on the 2-core bench machine, its vault worker ~100 ms and ~80 ms. A failure to
// use the directory only costs that time.
enableCompileCache();

main(process.argv[2]).catch((error: unknown) => {
  process.stderr.write(`gateway failed to start: ${error instanceof BootError ? error.message : (error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
