import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { GatewayConfig } from '../config/index.js';
import { createGateway, type Gateway, type GatewayOptions } from '../core/app.js';
import type { LogEntry } from '../core/logs/entry.js';
import { openai } from '../plugins/providers/openai/index.js';

export const ACCOUNT_KEY = 'gw-test-account-key-0123456789';
export const PROVIDER_KEY = 'sk-provider-secret-abcdefghijklmnop';

export interface TestGateway {
  readonly gateway: Gateway;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every line pino wrote, parsed. */
  readonly lines: Array<Record<string, any>>;
  /** The raw text pino wrote (for secret scans). */
  readonly rawLog: () => string;
  /** The request log entries. */
  readonly entries: () => LogEntry[];
  /** Resolves once `count` request entries have been logged (the log stage runs on response close). */
  readonly waitForEntries: (count: number, timeoutMs?: number) => Promise<LogEntry[]>;
  readonly close: () => Promise<void>;
}

/** Starts a gateway on a free loopback port with its log captured in memory. */
export async function startGateway(config: Partial<GatewayConfig> = {}, environment: NodeJS.ProcessEnv = {}, options: Pick<GatewayOptions, 'routing' | 'clock' | 'identity' | 'quota'> = {}): Promise<TestGateway> {
  const raw: string[] = [];
  const lines: Array<Record<string, any>> = [];
  const gateway = createGateway(
    { providers: [openai()], ...config },
    {
      ...options,
      environment: { GATEWAY_API_KEY: ACCOUNT_KEY, GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-test-')), LOG_LEVEL: 'info', ...environment },
      logDestination: {
        write(text: string) {
          raw.push(text);
          for (const line of text.split('\n')) if (line) lines.push(JSON.parse(line));
        },
      },
    },
  );
  const { url } = await gateway.listen(0, '127.0.0.1');
  const entries = () => lines.filter((line) => line.msg === 'request').map((line) => line.request as LogEntry);
  return {
    gateway,
    url,
    lines,
    rawLog: () => raw.join(''),
    entries,
    async waitForEntries(count, timeoutMs = 3000) {
      const deadline = Date.now() + timeoutMs;
      while (entries().length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      return entries();
    },
    close: () => gateway.close(),
  };
}

/**
 * The official SDK pointed at the gateway with the account key; `headers` pick the provider and
 * its settings, `apiKey` is the provider credential sent as `Authorization: Bearer`.
 */
export function gatewayClient(gatewayUrl: string, headers: Record<string, string>, apiKey = PROVIDER_KEY): OpenAI {
  return new OpenAI({
    apiKey,
    baseURL: `${gatewayUrl}/v1`,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, ...headers },
  });
}

/** The official SDK pointed at the gateway, with the fake as custom host. */
export function sdkClient(gatewayUrl: string, customHost: string, headers: Record<string, string> = {}): OpenAI {
  return gatewayClient(gatewayUrl, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': customHost, ...headers });
}

/** Headers for a raw `fetch` through the gateway to the fake. */
export function gatewayHeaders(customHost: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'x-gateway-api-key': ACCOUNT_KEY,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': customHost,
    authorization: `Bearer ${PROVIDER_KEY}`,
    ...extra,
  };
}

/** Secrets that must never appear in a log line. */
export const SECRETS = [ACCOUNT_KEY, PROVIDER_KEY];

/** Waits for the request's log entry and asserts there is exactly one for its trace id. */
export async function loggedOnce(gateway: TestGateway, traceId: string, timeoutMs = 3000): Promise<LogEntry> {
  const deadline = Date.now() + timeoutMs;
  let matching: LogEntry[] = [];
  while (Date.now() < deadline) {
    matching = gateway.entries().filter((entry) => entry.traceId === traceId);
    if (matching.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // Give a duplicate the chance to show up before counting.
  await new Promise((resolve) => setTimeout(resolve, 50));
  matching = gateway.entries().filter((entry) => entry.traceId === traceId);
  if (matching.length !== 1) throw new Error(`expected exactly one log entry for ${traceId}, found ${matching.length}`);
  return matching[0];
}

let traceCounter = 0;
/** A unique trace id for one test request. */
export const traceId = (label: string): string => `${label}-${process.pid}-${++traceCounter}`;

/** Polls `check` (every `everyMs`, up to `timeoutMs`) until it holds; false when it never did. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 20_000, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return false;
}
