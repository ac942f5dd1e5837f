import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway, type Gateway } from '../app.js';
import type { LogEntry } from '../logs/entry.js';
import type { ProviderRegistration } from '../spec/provider.js';

/** The account key of the kit's gateway (the kit checks it never reaches the provider). */
export const KIT_ACCOUNT_KEY = 'gw-conformance-account-key-0123456789';

/** The gateway the kit puts in front of the fake: only the plugin under test registered, on a loopback port. */
export interface KitGateway {
  readonly gateway: Gateway;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The request log entries written so far. */
  entries(): LogEntry[];
  close(): Promise<void>;
}

/**
 * Starts a gateway with `registration` as its only provider, its own data folder (removed on close)
 * and its log kept in memory, so the kit reads which operation handled a request.
 */
export async function startKitGateway(registration: ProviderRegistration): Promise<KitGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-conformance-'));
  const entries: LogEntry[] = [];
  const gateway = createGateway(
    { providers: [registration] },
    {
      environment: { GATEWAY_API_KEY: KIT_ACCOUNT_KEY, GATEWAY_DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      logDestination: {
        write(text: string) {
          for (const line of text.split('\n')) {
            if (!line) continue;
            const record = JSON.parse(line) as { msg?: string; request?: LogEntry };
            if (record.msg === 'request' && record.request) entries.push(record.request);
          }
        },
      },
    },
  );
  const { url } = await gateway.listen(0, '127.0.0.1');
  return {
    gateway,
    url,
    entries: () => entries,
    async close() {
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
