import { intakeFake } from '../../shared/intake-fake.js';

// A loopback fake of Datadog's logs HTTP intake v2 as its API reference describes it:
// `POST /api/v2/logs`, the key in `DD-API-KEY` (403 otherwise), a JSON array (or one object),
// gzip allowed (`Content-Encoding: gzip`), at most 5 MB uncompressed (413) and 1000 logs (400)
// per request; 202 `{}` when accepted. `failing` answers 503 (the intake down) while set.

export interface DatadogFake {
  readonly url: string;
  readonly logs: Array<Record<string, any>>;
  readonly requests: Array<{ gzip: boolean; count: number }>;
  failing: boolean;
  close(): void;
}

export async function datadogFake(apiKey: string): Promise<DatadogFake> {
  const state = { logs: [] as Array<Record<string, any>>, requests: [] as Array<{ gzip: boolean; count: number }>, failing: false };
  const server = await intakeFake(({ method, url, headers, body }) => {
    if (method !== 'POST' || url.split('?')[0] !== '/api/v2/logs') return { status: 404, body: { errors: ['not found'] } };
    if (headers['dd-api-key'] !== apiKey) return { status: 403, body: { errors: ['Forbidden'] } };
    if (state.failing) return { status: 503, body: { errors: ['unavailable'] } };
    if (body.length > 5 * 1024 * 1024) return { status: 413, body: { errors: ['payload too large'] } };
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    const logs = (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, any>>;
    if (logs.length > 1000) return { status: 400, body: { errors: ['too many logs'] } };
    state.requests.push({ gzip: headers['content-encoding'] === 'gzip', count: logs.length });
    state.logs.push(...logs);
    return { status: 202, body: {} };
  });
  return Object.assign(state, { url: server.url, close: () => server.close() });
}
