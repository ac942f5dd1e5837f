import { type BatchAdapter, type BatchLineResult, type BatchStatus, type ErrorBody, errorTypeForStatus, isRecord, type ProviderBatchState } from '../../../core/spec/index.js';

/** The HTTP status of a google.rpc.Status code (the canonical gRPC-to-HTTP mapping). */
const STATUS_BY_CODE: Record<number, number> = { 1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401 };

/** `BatchState` in OpenAI's terms; the last four are ended. */
const STATUS_BY_STATE: Record<string, BatchStatus> = {
  BATCH_STATE_PENDING: 'validating',
  BATCH_STATE_RUNNING: 'in_progress',
  BATCH_STATE_SUCCEEDED: 'completed',
  BATCH_STATE_FAILED: 'failed',
  BATCH_STATE_CANCELLED: 'cancelled',
  BATCH_STATE_EXPIRED: 'expired',
};
const ENDED = new Set(['BATCH_STATE_SUCCEEDED', 'BATCH_STATE_FAILED', 'BATCH_STATE_CANCELLED', 'BATCH_STATE_EXPIRED']);

const count = (value: unknown): number => (typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : 0);

/** `batches/{id}` from an operation or batch name. */
const batchPath = (name: string): string => `batches/${encodeURIComponent(name.replace(/^batches\//, ''))}`;

/** The batch (`GenerateContentBatch`) an answer carries: an Operation's `metadata`, or the batch itself. */
function batchOf(body: Record<string, unknown>): Record<string, unknown> {
  return isRecord(body.metadata) && typeof body.metadata.state === 'string' ? body.metadata : body;
}

function statusError(status: unknown): { status: number; error: ErrorBody } {
  const error = isRecord(status) ? status : {};
  const http = STATUS_BY_CODE[count(error.code)] ?? 500;
  return { status: http, error: { message: typeof error.message === 'string' && error.message ? error.message : `The request failed (code ${String(error.code)}).`, type: errorTypeForStatus(http), param: null, code: null } };
}

/**
 * The Gemini API's batch mode with inlined requests: `POST /models/{model}:batchGenerateContent`
 * (one model per batch) with `{batch: {displayName, inputConfig: {requests: {requests: [{request,
 * metadata: {key}}]}}}}`, each `request` the body the chat adapter built; the answer is a
 * long-running Operation named `batches/{id}` whose `metadata` is the batch (`state`, `batchStats`,
 * and once it has succeeded, `output.inlinedResponses.inlinedResponses` in input order, each a
 * `GenerateContentResponse` or a `google.rpc.Status` error). `GET /batches/{id}` reads it;
 * `POST /batches/{id}:cancel` cancels it (its answer is empty: the state is read again).
 */
export const geminiBatches: BatchAdapter = {
  endpoints: ['/v1/chat/completions'],
  mixedModels: false,
  maxLines: 100_000,
  create(lines) {
    const url = String(lines[0].upstream.url).replace(/:generateContent$/, ':batchGenerateContent');
    const requests = lines.map((line) => ({ request: JSON.parse(String(line.upstream.body)) as unknown, metadata: { key: line.customId } }));
    return { method: 'POST', url, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ batch: { displayName: 'llm-gateway batch', inputConfig: { requests: { requests } } } }) };
  },
  state(body): ProviderBatchState {
    if (!isRecord(body) || typeof body.name !== 'string') throw new Error('not a batch operation');
    const batch = batchOf(body);
    const state = String(batch.state);
    const stats = isRecord(batch.batchStats) ? batch.batchStats : {};
    const failure = isRecord(body.error) && typeof body.error.message === 'string' ? body.error.message : undefined;
    return {
      id: body.name,
      status: STATUS_BY_STATE[state] ?? 'in_progress',
      ended: ENDED.has(state),
      counts: { succeeded: count(stats.successfulRequestCount), failed: count(stats.failedRequestCount), processing: count(stats.pendingRequestCount) },
      ...(failure ? { failure } : {}),
    };
  },
  retrieve(batch, target) {
    return { method: 'GET', url: `${target.baseUrl}/${batchPath(batch.id)}`, headers: {} };
  },
  cancel(batch, target) {
    return { method: 'POST', url: `${target.baseUrl}/${batchPath(batch.id)}:cancel`, headers: {} };
  },
  results(batch, target) {
    return { method: 'GET', url: `${target.baseUrl}/${batchPath(batch.id)}`, headers: {} };
  },
  lineResults(body): BatchLineResult[] {
    const parsed = JSON.parse(Buffer.from(body).toString('utf8')) as unknown;
    const batch = isRecord(parsed) ? batchOf(parsed) : {};
    const output = isRecord(batch.output) && isRecord(batch.output.inlinedResponses) ? batch.output.inlinedResponses.inlinedResponses : undefined;
    if (!Array.isArray(output)) return [];
    return output.flatMap((item: unknown, index): BatchLineResult[] => {
      if (!isRecord(item)) return [];
      const customId = isRecord(item.metadata) && typeof item.metadata.key === 'string' ? item.metadata.key : `r${index}`;
      if (item.error !== undefined) return [{ customId, kind: 'errored', ...statusError(item.error) }];
      return item.response === undefined ? [] : [{ customId, kind: 'succeeded', body: item.response }];
    });
  },
};
