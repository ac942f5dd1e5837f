import { type GatewayConfig, resolveConfig } from '../../config/index.js';
import { openAuditTrail } from '../audit/index.js';
import type { CliIo } from '../cli-io.js';
import { COMMAND_HELP } from './help.js';
import { didYouMean } from './suggest.js';

/** Resolves when `stream` takes more (drain), or will never (close, error). */
function writable(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      for (const event of ['drain', 'close', 'error']) stream.removeListener(event, done);
      resolve();
    };
    for (const event of ['drain', 'close', 'error']) stream.on(event, done);
  });
}

/**
 * `llm-gateway audit`: `verify` recomputes the audit chain the gateway writes (the same store: the
 * data dir's audit.db, or the log's PostgreSQL with DATABASE_URL) and exits 0 when it is whole, 1
 * naming the `seq` and `id` of the first event changed, removed or inserted; `export` writes the
 * whole chain as JSON Lines, oldest first, to stdout.
 */
export async function runAuditCli(argv: readonly string[], gatewayConfig: GatewayConfig, io: CliIo, json: boolean): Promise<number> {
  const [action, ...others] = argv.filter((entry) => entry !== '--json');
  if ((action !== 'verify' && action !== 'export') || others.length > 0) {
    const problem = action === undefined ? 'audit needs an action' : others.length > 0 && (action === 'verify' || action === 'export') ? `audit ${action} takes no argument (got ${others[0]})` : `unknown action "audit ${action}"${didYouMean(action, ['verify', 'export'])}`;
    io.stderr.write(`${problem}\n\n${COMMAND_HELP.audit}\n`);
    return 2;
  }
  const audit = openAuditTrail(resolveConfig(gatewayConfig, io.environment));
  try {
    if (action === 'export') {
      // A reader that goes away (`| head`) ends the export quietly: its EPIPE may come after the last
      // write returned, so the listener stays until the process ends.
      let gone = false;
      io.stdout.on('error', () => void (gone = true));
      for await (const line of audit.export()) {
        if (gone) break;
        if (!io.stdout.write(line as string)) await writable(io.stdout);
      }
      return 0;
    }
    const result = await audit.verify();
    if (json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (result.ok) {
      if (!json) io.stdout.write(result.head ? `audit chain whole: ${result.count} events, last seq ${result.head.seq} (hash ${result.head.hash})\n` : 'audit chain whole: no events\n');
      return 0;
    }
    io.stderr.write(`audit chain broken at seq ${result.seq}, id ${result.id ?? '(removed)'}: ${result.reason}\n`);
    return 1;
  } finally {
    await audit.close();
  }
}
