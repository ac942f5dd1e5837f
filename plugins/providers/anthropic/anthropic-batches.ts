import { type BatchAdapter, type BatchLineResult, type BatchStatus, isRecord, type ProviderBatchState } from '../../../core/spec/index.js';
import { jsonLines } from '../../shared/batch-storage.js';
import { anthropicErrorBody } from './anthropic-error.js';

/** The HTTP status a single request would have had, by Anthropic's documented error type. */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/**
 * The status of a Message Batch in OpenAI's terms: `in_progress`, `canceling` (cancelling), and
 * `ended`, which is `cancelled` when a cancel was asked for, `expired` when every request expired
 * (the 24-hour window passed with nothing done), and `completed` otherwise (some lines may have failed).
 */
function statusOf(batch: Record<string, unknown>, counts: Record<string, unknown>): BatchStatus {
  if (batch.processing_status === 'canceling') return 'cancelling';
  if (batch.processing_status !== 'ended') return 'in_progress';
  if (batch.cancel_initiated_at) return 'cancelled';
  if (count(counts.expired) > 0 && count(counts.succeeded) + count(counts.errored) === 0) return 'expired';
  return 'completed';
}

/**
 * Anthropic's Message Batches API (`POST /v1/messages/batches`, `GET …/{id}`, `POST …/{id}/cancel`,
 * `GET …/{id}/results`, a JSONL file of `{custom_id, result: {type: succeeded | errored | canceled |
 * expired}}` in any order). Each line's `params` is the body the chat adapter built for it.
 */
export const anthropicBatches: BatchAdapter = {
  endpoints: ['/v1/chat/completions'],
  mixedModels: true,
  maxLines: 100_000,
  create(lines, target) {
    const requests = lines.map((line) => ({ custom_id: line.customId, params: JSON.parse(String(line.upstream.body)) as unknown }));
    return { method: 'POST', url: `${target.baseUrl}/messages/batches`, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ requests }) };
  },
  state(body): ProviderBatchState {
    if (!isRecord(body) || typeof body.id !== 'string') throw new Error('not a Message Batch');
    const counts = isRecord(body.request_counts) ? body.request_counts : {};
    const status = statusOf(body, counts);
    return {
      id: body.id,
      status,
      ended: body.processing_status === 'ended',
      counts: { succeeded: count(counts.succeeded), failed: count(counts.errored) + count(counts.expired) + count(counts.canceled), processing: count(counts.processing) },
    };
  },
  retrieve(batch, target) {
    return { method: 'GET', url: `${target.baseUrl}/messages/batches/${encodeURIComponent(batch.id)}`, headers: {} };
  },
  cancel(batch, target) {
    return { method: 'POST', url: `${target.baseUrl}/messages/batches/${encodeURIComponent(batch.id)}/cancel`, headers: {} };
  },
  results(batch, target) {
    return { method: 'GET', url: `${target.baseUrl}/messages/batches/${encodeURIComponent(batch.id)}/results`, headers: {} };
  },
  lineResults(body) {
    const results: BatchLineResult[] = [];
    for (const parsed of jsonLines(body)) {
      if (!isRecord(parsed) || typeof parsed.custom_id !== 'string' || !isRecord(parsed.result)) continue;
      const customId = parsed.custom_id;
      const result = parsed.result;
      if (result.type === 'succeeded') results.push({ customId, kind: 'succeeded', body: result.message });
      else if (result.type === 'errored') {
        // `error` is an error body: `{"type": "error", "error": {"type", "message"}}`.
        const inner = isRecord(result.error) && isRecord(result.error.error) ? result.error.error : isRecord(result.error) ? result.error : {};
        const status = STATUS_BY_TYPE[String(inner.type)] ?? 500;
        results.push({ customId, kind: 'errored', status, error: anthropicErrorBody(inner, status) });
      } else if (result.type === 'expired') results.push({ customId, kind: 'expired' });
      else results.push({ customId, kind: 'cancelled' });
    }
    return results;
  },
};
