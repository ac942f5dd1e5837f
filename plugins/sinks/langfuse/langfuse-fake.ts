import { intakeFake } from '../../shared/intake-fake.js';

// A loopback fake of Langfuse's ingestion API as its reference describes it: `POST
// /api/public/ingestion`, Basic auth with the project's public and secret keys (401 otherwise),
// `{ batch: [events] }` of at most 3.5 MB; each event `{ id, type, timestamp, body }`, deduplicated
// by its id; answer 207 `{ successes: [{ id, status }], errors: [{ id, status, message }] }`.
// Traces are upserted by `body.id`, observations kept by `body.id`. `failing` answers 503.

export interface LangfuseFake {
  readonly url: string;
  readonly traces: Map<string, Record<string, any>>;
  readonly generations: Map<string, Record<string, any>>;
  /** Events received, duplicates included. */
  received: number;
  failing: boolean;
  close(): void;
}

const TYPES = new Set(['trace-create', 'generation-create', 'generation-update', 'span-create', 'event-create', 'score-create']);

export async function langfuseFake(publicKey: string, secretKey: string): Promise<LangfuseFake> {
  const seen = new Set<string>();
  const state = { traces: new Map<string, Record<string, any>>(), generations: new Map<string, Record<string, any>>(), received: 0, failing: false };
  const expected = `Basic ${Buffer.from(`${publicKey}:${secretKey}`).toString('base64')}`;
  const server = await intakeFake(({ method, url, headers, body }) => {
    if (method !== 'POST' || url !== '/api/public/ingestion') return { status: 404, body: { message: 'not found' } };
    if (headers.authorization !== expected) return { status: 401, body: { message: 'Invalid credentials' } };
    if (state.failing) return { status: 503, body: { message: 'unavailable' } };
    if (body.length > 3.5 * 1024 * 1024) return { status: 413, body: { message: 'batch too large' } };
    const { batch } = JSON.parse(body.toString('utf8')) as { batch: Array<Record<string, any>> };
    const successes: Array<{ id: string; status: number }> = [];
    const errors: Array<{ id: string; status: number; message: string }> = [];
    for (const event of batch) {
      state.received++;
      if (typeof event.id !== 'string' || !TYPES.has(event.type) || typeof event.timestamp !== 'string' || typeof event.body?.id !== 'string') {
        errors.push({ id: String(event.id), status: 400, message: 'invalid event' });
        continue;
      }
      successes.push({ id: event.id, status: 201 });
      if (seen.has(event.id)) continue;
      seen.add(event.id);
      if (event.type === 'trace-create') state.traces.set(event.body.id, { ...state.traces.get(event.body.id), ...event.body });
      if (event.type === 'generation-create') state.generations.set(event.body.id, event.body);
    }
    return { status: 207, body: { successes, errors } };
  });
  return Object.assign(state, { url: server.url, close: () => server.close() });
}
