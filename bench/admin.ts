// The gateway's admin HTTP API as the bench uses it: create a virtual key, read the request log.

/** The limits every bench key carries: high enough never to refuse a bench request, but checked on each. */
export const BENCH_KEY_LIMITS = { budget_usd: 1_000_000, requests_per_minute: 100_000_000, requests_per_day: 100_000_000_000 } as const;

const ADMIN_LIMIT_MS = 10_000;

/**
 * Creates a virtual key through `POST /admin/virtual-keys` with the account key: provider openai,
 * the bench's provider key, the mock as its custom host, `BENCH_KEY_LIMITS`, and `guardrailPolicy`
 * when given. Resolves to the key's value (`vk-…`).
 */
export async function createVirtualKey(gatewayUrl: string, accountKey: string, options: { name: string; mockUrl: string; guardrailPolicy?: string }): Promise<string> {
  const body = {
    name: options.name,
    provider: 'openai',
    provider_key: 'sk-bench',
    custom_host: `${options.mockUrl}/v1`,
    limits: BENCH_KEY_LIMITS,
    ...(options.guardrailPolicy === undefined ? {} : { guardrail_policy: options.guardrailPolicy }),
  };
  const answer = await fetch(`${gatewayUrl}/admin/virtual-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': accountKey },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(ADMIN_LIMIT_MS),
  });
  const text = await answer.text();
  if (answer.status !== 201) throw new Error(`creating the virtual key "${options.name}" answered ${answer.status}: ${text.slice(0, 500)}`);
  const key = (JSON.parse(text) as { key?: unknown }).key;
  if (typeof key !== 'string' || !key.startsWith('vk-')) throw new Error(`creating the virtual key "${options.name}" answered without a vk- key: ${text.slice(0, 500)}`);
  return key;
}

/** A log entry as `GET /admin/logs` lists it (the fields the bench checks). */
export interface LoggedRequest {
  status: number;
  caller_type: string;
  key_name: string | null;
  guardrails: Array<{ guardrail: string; side: string; action: string }>;
}

/**
 * Waits (up to `limitMs`) until the gateway's log store lists a request that `matches` (entries are
 * written in batches, off the request path) and returns it.
 */
export async function waitForLogEntry(gatewayUrl: string, accountKey: string, matches: (entry: LoggedRequest) => boolean, limitMs = 5_000): Promise<LoggedRequest> {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const answer = await fetch(`${gatewayUrl}/admin/logs?limit=50`, { headers: { 'x-gateway-api-key': accountKey }, signal: AbortSignal.timeout(ADMIN_LIMIT_MS) });
    const text = await answer.text();
    if (answer.status !== 200) throw new Error(`GET /admin/logs answered ${answer.status}: ${text.slice(0, 500)}`);
    const found = (JSON.parse(text) as { data: LoggedRequest[] }).data.find(matches);
    if (found) return found;
    if (performance.now() > deadline) throw new Error(`no matching entry in the log store after ${limitMs} ms; latest: ${text.slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
