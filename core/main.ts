#!/usr/bin/env node
import { BootError } from './errors.js';

/** How long SIGINT/SIGTERM lets requests in flight (long streams included) finish. */
const SHUTDOWN_GRACE_MS = Number(process.env.GATEWAY_SHUTDOWN_GRACE_MS ?? 30_000);

/**
 * CLI entry. `start` (default) serves the gateway configured by `gateway.config.ts` on HOST:PORT.
 * Start-up fails with a message naming the plugin or setting at fault.
 */
async function main(command = 'start'): Promise<void> {
  if (command !== 'start') {
    process.stderr.write(`usage: node dist/core/main.js start\n`);
    process.exit(2);
  }
  const { default: config } = await import('../gateway.config.js');
  const { createGateway } = await import('./app.js');
  const gateway = createGateway(config);
  const { url } = await gateway.listen();
  const providers = gateway.registry.list().providers.map((provider) => `${provider.id} (${provider.operations?.join(', ')})`);
  const logs = gateway.config.logs.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `SQLite (${gateway.config.dataDir}/logs.db)`;
  process.stdout.write(`gateway listening on ${url}\nproviders: ${providers.join('; ')}\nrequest logs: ${logs}\n`);
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

main(process.argv[2]).catch((error: unknown) => {
  process.stderr.write(`gateway failed to start: ${error instanceof BootError ? error.message : (error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
