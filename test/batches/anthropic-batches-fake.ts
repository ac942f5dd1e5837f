import type { ServerResponse } from 'node:http';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { batchFake, sendJson as json } from './batch-fake.js';

/**
 * A loopback fake of Anthropic's Message Batches API, following its documented lifecycle: a batch
 * is created `in_progress` with every request `processing`; the test decides when it ends
 * (`end(outcomes)`) and how each request ended (succeeded with a Message, errored with an error
 * body, expired, canceled); a cancel turns it `canceling` (ended by the test, the unfinished
 * requests then `canceled`). `GET …/results` answers only once the batch has `ended`, as JSONL in an
 * order unrelated to the input's (the fake reverses it). Requires `x-api-key` and `anthropic-version`.
 */
export type LineOutcome =
  | { readonly type: 'succeeded'; readonly text: string; readonly usage: { input_tokens: number; output_tokens: number } }
  | { readonly type: 'errored'; readonly errorType: string; readonly message: string }
  | { readonly type: 'expired' }
  | { readonly type: 'canceled' };

interface FakeBatch {
  id: string;
  requests: Array<{ custom_id: string; params: Record<string, any> }>;
  status: 'in_progress' | 'canceling' | 'ended';
  cancelInitiatedAt: string | null;
  outcomes?: Readonly<Record<string, LineOutcome>>;
}

export interface AnthropicBatchesFake extends Fake {
  readonly batches: Map<string, FakeBatch>;
  /** Ends a batch: each request's outcome by its custom id (missing ones: `canceled` after a cancel, else `expired`). */
  end(id: string, outcomes: Readonly<Record<string, LineOutcome>>): void;
  /** The only batch created so far (throws when there is not exactly one). */
  only(): FakeBatch;
}

function countsOf(batch: FakeBatch) {
  const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
  for (const request of batch.requests) {
    const outcome = batch.status === 'ended' ? batch.outcomes?.[request.custom_id] : undefined;
    if (outcome === undefined) counts.processing++;
    else counts[outcome.type]++;
  }
  return counts;
}

function batchObject(batch: FakeBatch, origin: string) {
  const ended = batch.status === 'ended';
  return {
    id: batch.id,
    type: 'message_batch',
    processing_status: batch.status,
    request_counts: countsOf(batch),
    ended_at: ended ? '2026-11-28T22:00:00Z' : null,
    created_at: '2026-11-28T21:00:00Z',
    expires_at: '2026-11-29T21:00:00Z',
    archived_at: null,
    cancel_initiated_at: batch.cancelInitiatedAt,
    results_url: ended ? `${origin}/v1/messages/batches/${batch.id}/results` : null,
  };
}

function resultLine(request: FakeBatch['requests'][number], outcome: LineOutcome) {
  if (outcome.type === 'succeeded') {
    const message = {
      id: `msg_${request.custom_id}`,
      type: 'message',
      role: 'assistant',
      model: request.params.model,
      content: [{ type: 'text', text: outcome.text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: outcome.usage,
    };
    return { custom_id: request.custom_id, result: { type: 'succeeded', message } };
  }
  if (outcome.type === 'errored') return { custom_id: request.custom_id, result: { type: 'errored', error: { type: 'error', error: { type: outcome.errorType, message: outcome.message } } } };
  return { custom_id: request.custom_id, result: { type: outcome.type } };
}

export async function startAnthropicBatchesFake(apiKey: string): Promise<AnthropicBatchesFake> {
  const batches = new Map<string, FakeBatch>();
  let created = 0;
  const fake = await startFake();
  const handler = (request: RecordedRequest, response: ServerResponse) => {
    if (request.headers['x-api-key'] !== apiKey || request.headers['anthropic-version'] === undefined) {
      return json(response, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    }
    const path = request.url.split('?')[0];
    if (request.method === 'POST' && path === '/v1/messages/batches') {
      const body = request.json() as { requests: FakeBatch['requests'] };
      const batch: FakeBatch = { id: `msgbatch_fake${++created}`, requests: body.requests, status: 'in_progress', cancelInitiatedAt: null };
      batches.set(batch.id, batch);
      return json(response, 200, batchObject(batch, fake.origin));
    }
    const match = /^\/v1\/messages\/batches\/([^/]+)(?:\/(cancel|results))?$/.exec(path);
    const batch = match ? batches.get(match[1]) : undefined;
    if (!batch) return json(response, 404, { type: 'error', error: { type: 'not_found_error', message: 'Not found' } });
    if (request.method === 'GET' && match![2] === undefined) return json(response, 200, batchObject(batch, fake.origin));
    if (request.method === 'POST' && match![2] === 'cancel') {
      if (batch.status === 'in_progress') {
        batch.status = 'canceling';
        batch.cancelInitiatedAt = '2026-11-28T21:30:00Z';
      }
      return json(response, 200, batchObject(batch, fake.origin));
    }
    if (request.method === 'GET' && match![2] === 'results') {
      if (batch.status !== 'ended') return json(response, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'Batch has not ended' } });
      const lines = [...batch.requests].reverse().map((line) => JSON.stringify(resultLine(line, batch.outcomes![line.custom_id])));
      response.writeHead(200, { 'content-type': 'application/binary' }).end(`${lines.join('\n')}\n`);
      return;
    }
    return json(response, 404, { type: 'error', error: { type: 'not_found_error', message: 'Not found' } });
  };
  fake.handle(handler);
  return batchFake(fake, batches, 'batch', {
    batches,
    end(id: string, outcomes: Readonly<Record<string, LineOutcome>>) {
      const batch = batches.get(id)!;
      const filled: Record<string, LineOutcome> = {};
      for (const request of batch.requests) filled[request.custom_id] = outcomes[request.custom_id] ?? { type: batch.cancelInitiatedAt ? 'canceled' : 'expired' };
      batch.outcomes = filled;
      batch.status = 'ended';
    },
  });
}
