import { ACCOUNT_KEY, type TestGateway } from '../harness.js';

/**
 * Waits until every trace id is readable through `GET /admin/logs`. The log stage runs when a
 * response closes, which can be just after the SDK has its answer: so flush, look, and repeat.
 */
export async function waitForLogs(gateway: TestGateway, traceIds: string[], timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let missing = traceIds;
  while (Date.now() < deadline) {
    await gateway.gateway.flushLogs();
    const found = await Promise.all(
      missing.map(async (traceId) => {
        const response = await fetch(`${gateway.url}/admin/logs?trace_id=${encodeURIComponent(traceId)}`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } });
        if (response.status === 404) throw new Error('GET /admin/logs answers 404: the logs API is not in this build.');
        return response.ok && ((await response.json()) as { data: unknown[] }).data.length > 0;
      }),
    );
    missing = missing.filter((_, index) => !found[index]);
    if (missing.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Log entries not readable after ${timeoutMs} ms: ${missing.join(', ')}`);
}
