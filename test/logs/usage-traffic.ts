import OpenAI from 'openai';
import { ECHO_COST_USD } from '../cache/cache-harness.js';
import { ACCOUNT_KEY, PROVIDER_KEY, sdkClient, type TestGateway } from '../harness.js';
import { waitForLogs } from '../browser/logs-api.js';

/** Calls the admin API with the account key. */
export async function adminJson(gateway: TestGateway, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

export interface UsageTraffic {
  /** The boundary: every request of the previous period ended before it, every one of the current period after. */
  boundary: number;
  keyId: string;
  keyName: string;
  /** What the current period's embedding cost, as logged. */
  embeddingCostUsd: number;
  traces: string[];
}

/**
 * Real traffic through the official SDK, in two periods split at `boundary`:
 * - before (previous period): 2 chats by the account key, one the upstream fails (500);
 * - after (current period): 3 chats by a virtual key named `keyName` (users alice, bob, alice;
 *   metadata team search, ads, search), one failing chat by the account key (user bob, team ads),
 *   and one embedding by the account key (user carol, no metadata).
 * Every successful chat costs {@link ECHO_COST_USD} (the echo upstream's fixed usage).
 */
export async function makeUsageTraffic(gateway: TestGateway, fakeUrl: string, run: string): Promise<UsageTraffic> {
  const keyName = `Team Search ${run}`;
  const created = await adminJson(gateway, 'POST', '/admin/virtual-keys', { name: keyName, provider: 'openai', provider_key: PROVIDER_KEY, custom_host: fakeUrl });
  if (created.status !== 201) throw new Error(`creating the key answered ${created.status}: ${JSON.stringify(created.json)}`);
  const keyClient = (headers: Record<string, string>) =>
    new OpenAI({ apiKey: 'unused-by-the-gateway', baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': created.json.key, ...headers } });
  const traces: string[] = [];
  const trace = (label: string) => {
    const id = `usage-${run}-${label}`;
    traces.push(id);
    return { 'x-gateway-trace-id': id };
  };
  const chat = (client: OpenAI, text: string, user?: string) =>
    client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...(user ? { user } : {}) });
  const failing = (client: OpenAI, user?: string) => chat(client, 'fail-500 please', user).then(() => Promise.reject(new Error('the upstream error should reach the client')), () => undefined);

  // The previous period.
  await chat(sdkClient(gateway.url, fakeUrl, trace('prev-ok')), 'earlier question', 'alice');
  await failing(sdkClient(gateway.url, fakeUrl, trace('prev-fail')), 'alice');
  await waitForLogs(gateway, traces);
  // A whole second, so that a date-time field (which holds seconds) can give it exactly.
  const boundary = Math.ceil((Date.now() + 1) / 1000) * 1000;
  while (Date.now() <= boundary) await new Promise((resolve) => setTimeout(resolve, 2));

  // The current period.
  const metadata = (team: string) => ({ 'x-gateway-metadata': JSON.stringify({ team, run }) });
  await chat(keyClient({ ...trace('key-1'), ...metadata('search') }), 'first question', 'alice');
  await chat(keyClient({ ...trace('key-2'), ...metadata('ads') }), 'second question', 'bob');
  await chat(keyClient({ ...trace('key-3'), ...metadata('search') }), 'third question', 'alice');
  await failing(sdkClient(gateway.url, fakeUrl, { ...trace('fail'), ...metadata('ads') }), 'bob');
  const embeddingTrace = trace('embedding');
  await sdkClient(gateway.url, fakeUrl, embeddingTrace).embeddings.create({ model: 'text-embedding-3-small', input: 'embed these words', user: 'carol' });
  await waitForLogs(gateway, traces);
  const embedding = await adminJson(gateway, 'GET', `/admin/logs?trace_id=${embeddingTrace['x-gateway-trace-id']}`);
  return { boundary, keyId: created.json.id, keyName, embeddingCostUsd: embedding.json.data[0].cost_usd, traces };
}

export { ECHO_COST_USD };
