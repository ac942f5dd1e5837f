import { timeOrderedId } from '../../ids.js';
import type { LogEntry } from '../../logs/entry.js';
import type { Caller } from '../../spec/key-resolver.js';
import type { BatchOutcome } from './batch-lines.js';
import type { StoredBatch } from './batch-store.js';

/** The statuses a batch ends in: its entry's last write. */
const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** Token usage summed over the lines that ran. */
function summedUsage(outcome: BatchOutcome | undefined): LogEntry['usage'] | undefined {
  if (!outcome || outcome.ran.length === 0) return undefined;
  let promptTokens = 0;
  let completionTokens = 0;
  let cachedTokens = 0;
  for (const { usage } of outcome.ran) {
    if (!usage) continue;
    promptTokens += usage.prompt_tokens;
    completionTokens += usage.completion_tokens;
    const cached = usage.prompt_tokens_details?.cached_tokens;
    if (typeof cached === 'number') cachedTokens += cached;
  }
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, ...(cachedTokens > 0 ? { cachedTokens } : {}) };
}

/**
 * The one log entry of a translated batch (`operation: "batch"`), written when the batch is created
 * and again, under the same id (`replaces`), at each change of its state and when it ends: its
 * provider, models, caller, status (`batch.status`), and once it has ended the tokens and cost summed
 * over the lines that ran, the time from creation to its end, and a summary of its lines in metadata
 * (`batch.id`, `batch.status`, `batch.lines`, `batch.succeeded`, `batch.errored`, `batch.expired`,
 * `batch.cancelled`). The trace id is the batch id.
 */
export function batchLogEntry(batch: StoredBatch, caller: Caller, outcome: BatchOutcome | undefined, endedAt: number): LogEntry {
  const models = [...new Set(batch.lines.map((line) => line.model))];
  const durationMs = Math.max(0, endedAt - batch.created_at * 1000);
  const failed = batch.status === 'failed';
  const usage = summedUsage(outcome);
  const summary = outcome?.summary;
  return {
    // A batch made before its entry had an id of its own is logged once, when it ends.
    id: batch.logId ?? timeOrderedId(endedAt),
    ...(batch.logId !== undefined ? { replaces: true as const } : {}),
    ...(batch.logId !== undefined && !ENDED.has(batch.status) ? { progress: true as const } : {}),
    time: new Date(batch.created_at * 1000).toISOString(),
    traceId: batch.id,
    method: 'POST',
    path: '/v1/batches',
    operation: 'batch',
    provider: batch.provider,
    ...(models.length > 0 ? { model: models.join(',').slice(0, 200) } : {}),
    status: failed ? 400 : 200,
    outcome: failed ? 'error' : 'ok',
    ...(failed ? { error: { type: 'invalid_request_error', code: batch.errors?.data[0]?.code ?? 'batch_failed', message: (batch.errors?.data[0]?.message ?? 'The batch failed.').slice(0, 500) } } : {}),
    caller: caller.type === 'account' ? 'account' : `${caller.type}:${caller.id}`,
    callerType: caller.type,
    ...(caller.type === 'account' ? {} : { keyId: caller.id, keyName: caller.name }),
    streaming: false,
    durationMs,
    gatewayMs: 0,
    ...(usage ? { usage } : {}),
    ...(batch.costUsd !== undefined ? { costUsd: batch.costUsd } : {}),
    metadata: {
      // The caller's own metadata first: the batch's summary keys cannot be overwritten.
      ...(batch.metadata ?? {}),
      'batch.id': batch.id,
      'batch.status': batch.status,
      'batch.lines': String(batch.request_counts.total),
      'batch.succeeded': String(summary?.succeeded ?? 0),
      'batch.errored': String(summary?.errored ?? 0),
      'batch.expired': String(summary?.expired ?? 0),
      'batch.cancelled': String(summary?.cancelled ?? 0),
    },
    guardrails: [],
  };
}
