import { randomUUID } from 'node:crypto';
import { errors, GatewayError } from '../../errors.js';
import { timeOrderedId } from '../../ids.js';
import type { UpstreamClient } from '../../http/upstream.js';
import type { LogSink } from '../../logs/entry.js';
import type { AuthSlice, GatewayContext } from '../../pipeline/context.js';
import type { BatchAdapter, BatchLineResult, ProviderBatchState } from '../../spec/batches.js';
import { isRecord } from '../../spec/is-record.js';
import type { ChatRequest } from '../../spec/unified.js';
import { type BatchInputError, batchOutcome, mapBatchLines, parseBatchInput } from './batch-lines.js';
import { batchLogEntry } from './batch-log.js';
import { batchCostUsd, type BatchMoneyDependencies, batchPrice, batchReservation, reserveBatch, settleBatch } from './batch-money.js';
import { type BatchStore, newBatchId, newFileId, type StoredBatch } from './batch-store.js';
import { readUpstream, sendBatchRequest, upstreamJson } from './batch-upstream.js';

export interface BatchServiceDependencies extends BatchMoneyDependencies {
  readonly store: BatchStore;
  readonly upstream: UpstreamClient;
  /** Where the batch's log entry goes (the request log's sinks). */
  readonly sinks: () => readonly LogSink[];
  /** Most bytes read from one provider answer (the results file included): `upstream.maxAnswerBytes`. */
  readonly maxAnswerBytes: number;
}

const TERMINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);
const WINDOW_SECONDS = 24 * 60 * 60;
const seconds = (): number => Math.floor(Date.now() / 1000);

export const batchNotFound = (id: string, param: string): Error => errors.notFound(`No batch or file found with id '${id}'.`, { param, code: 'batch_not_found' });
const invalidBatch = (message: string, param: string | null): Error => errors.invalidRequest(message, { param, code: 'invalid_batch' });

/** 400 when the request's provider is not the one the batch or file belongs to (its credentials would not reach it). */
export function assertProvider(recorded: string, auth: AuthSlice): void {
  if (recorded !== auth.provider.id) {
    throw errors.invalidRequest(`This object belongs to the provider "${recorded}"; send the request to that provider (x-gateway-provider).`, { param: 'x-gateway-provider', code: 'batch_provider_mismatch' });
  }
}

/** OpenAI's batch object. */
export function renderBatch(batch: StoredBatch): Record<string, unknown> {
  return {
    id: batch.id,
    object: 'batch',
    endpoint: batch.endpoint,
    errors: batch.errors ?? null,
    input_file_id: batch.input_file_id,
    completion_window: batch.completion_window,
    status: batch.status,
    output_file_id: batch.output_file_id ?? null,
    error_file_id: batch.error_file_id ?? null,
    created_at: batch.created_at,
    in_progress_at: batch.in_progress_at ?? null,
    expires_at: batch.expires_at,
    finalizing_at: batch.finalizing_at ?? null,
    completed_at: batch.completed_at ?? null,
    failed_at: batch.failed_at ?? null,
    expired_at: batch.expired_at ?? null,
    cancelling_at: batch.cancelling_at ?? null,
    cancelled_at: batch.cancelled_at ?? null,
    request_counts: batch.request_counts,
    metadata: batch.metadata,
  };
}

/** `metadata`: at most 16 string values (OpenAI's bounds: keys up to 64 characters, values up to 512). */
function metadataOf(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value) || Object.keys(value).length > 16) throw invalidBatch('metadata must be an object of at most 16 string values.', 'metadata');
  for (const [key, entry] of Object.entries(value)) {
    if (key.length > 64 || typeof entry !== 'string' || entry.length > 512) throw invalidBatch('metadata keys are at most 64 characters and values strings of at most 512.', 'metadata');
  }
  return value as Record<string, string>;
}

/** The provider's lifecycle on the stored batch: counts, status and its timestamps (an ended batch is `finalizing` until its results are read). */
function applyState(batch: StoredBatch, state: ProviderBatchState): void {
  const now = seconds();
  batch.upstream = state;
  if (state.counts) batch.request_counts = { total: batch.request_counts.total, completed: state.counts.succeeded, failed: state.counts.failed };
  if (state.ended) {
    batch.status = 'finalizing';
    batch.finalizing_at ??= now;
    return;
  }
  batch.status = state.status;
  if (state.status === 'in_progress') batch.in_progress_at ??= now;
  if (state.status === 'cancelling') batch.cancelling_at ??= now;
}

/**
 * The lifecycle of translated batches: create (validate every line, map each with the provider's
 * chat adapter, reserve the estimate, create the provider's batch), advance (read the provider's
 * state when the caller asks; once it has ended, read its results into OpenAI's output and error
 * files, charge what ran, write the batch's log entry, once), and cancel.
 */
export class BatchService {
  constructor(private readonly dependencies: BatchServiceDependencies) {}

  private adapter(auth: AuthSlice): BatchAdapter {
    const adapter = auth.provider.operations.batches;
    if (!adapter || !auth.provider.operations.chat) throw errors.invalidRequest(`The provider "${auth.provider.id}" does not serve batches.`, { param: 'x-gateway-provider', code: 'unsupported_operation' });
    return adapter;
  }

  private price(auth: AuthSlice): (model: string) => ReturnType<typeof batchPrice> {
    return (model) => batchPrice(this.dependencies.prices, auth.provider, model, auth.target.headers);
  }

  async create(context: GatewayContext, auth: AuthSlice, owner: string, body: Record<string, unknown>): Promise<StoredBatch> {
    const signal = context.signal;
    const adapter = this.adapter(auth);
    const { store } = this.dependencies;
    if (typeof body.input_file_id !== 'string') throw invalidBatch('input_file_id is required.', 'input_file_id');
    if (typeof body.endpoint !== 'string' || !adapter.endpoints.includes(body.endpoint)) {
      throw invalidBatch(`endpoint must be one of ${adapter.endpoints.join(', ')} for the provider "${auth.provider.id}".`, 'endpoint');
    }
    if (body.completion_window !== '24h') throw invalidBatch('completion_window must be "24h".', 'completion_window');
    const metadata = metadataOf(body.metadata);
    const file = await store.file(owner, body.input_file_id);
    if (!file) throw batchNotFound(body.input_file_id, 'input_file_id');
    assertProvider(file.provider, auth);
    if (file.purpose !== 'batch') throw invalidBatch('The input file must have been uploaded with purpose "batch".', 'input_file_id');
    const content = (await store.content(owner, file.id)) ?? '';
    const input = parseBatchInput(content, body.endpoint, auth.provider, adapter);
    const created = seconds();
    const batch: StoredBatch = {
      id: newBatchId(),
      owner,
      provider: auth.provider.id,
      endpoint: body.endpoint,
      input_file_id: file.id,
      completion_window: '24h',
      metadata,
      status: 'validating',
      created_at: created,
      expires_at: created + WINDOW_SECONDS,
      request_counts: { total: input.requests.length, completed: 0, failed: 0 },
      lines: input.requests.map((request, index) => ({ customId: input.customIds[index], model: request.model })),
      logId: timeOrderedId(created * 1000),
    };
    const mapped = input.errors.length === 0 ? mapBatchLines(input.requests, auth.provider, auth.target) : { lines: [], errors: input.errors };
    if (mapped.errors.length > 0) return this.fail(auth, batch, mapped.errors);
    const reservation = await reserveBatch(this.dependencies, await this.dependencies.levels(context), input.requests, this.price(auth), batch.id);
    let state: ProviderBatchState;
    try {
      const options = { signal, maxBytes: this.dependencies.maxAnswerBytes };
      // A provider whose jobs read cloud storage gets the input written there first.
      if (adapter.stage) await sendBatchRequest(this.dependencies.upstream, auth, adapter.stage(mapped.lines, auth.target, batch.id), options);
      const answer = await sendBatchRequest(this.dependencies.upstream, auth, adapter.create(mapped.lines, auth.target, batch.id), options);
      state = readUpstream(auth.provider.id, () => adapter.state(upstreamJson(answer, auth.provider.id)));
    } catch (error) {
      // Nothing was created upstream: the reservation is released.
      await settleBatch(this.dependencies, reservation, 0).catch(() => {});
      throw error;
    }
    const started: StoredBatch = { ...batch, ...(reservation ? { reservation } : {}) };
    applyState(started, state);
    await store.putBatch(started);
    if (state.ended) return this.end(auth, started, signal);
    this.log(auth, started, undefined);
    return started;
  }

  /** A batch whose input was refused (`validating` → `failed`), with its problems by line; nothing was sent or reserved. */
  private async fail(auth: AuthSlice, batch: StoredBatch, problems: BatchInputError[]): Promise<StoredBatch> {
    const failed: StoredBatch = { ...batch, status: 'failed', failed_at: seconds(), errors: { object: 'list', data: problems } };
    await this.dependencies.store.putBatch(failed);
    this.log(auth, failed, undefined);
    return failed;
  }

  /** The batch, advanced: the provider's state read when it has not ended, its results once it has. */
  async view(auth: AuthSlice, owner: string, id: string, signal: AbortSignal): Promise<StoredBatch> {
    const batch = await this.dependencies.store.batch(owner, id);
    if (!batch) throw batchNotFound(id, 'batch_id');
    assertProvider(batch.provider, auth);
    if (TERMINAL.has(batch.status) || !batch.upstream) return batch;
    if (!batch.upstream.ended) {
      const adapter = this.adapter(auth);
      const before = batch.status;
      const answer = await sendBatchRequest(this.dependencies.upstream, auth, adapter.retrieve(batch.upstream, auth.target), { signal, maxBytes: this.dependencies.maxAnswerBytes });
      applyState(batch, readUpstream(auth.provider.id, () => adapter.state(upstreamJson(answer, auth.provider.id))));
      if (!batch.upstream.ended) {
        await this.dependencies.store.putBatch(batch);
        // The batch's log entry follows its state.
        if (batch.status !== before) this.log(auth, batch, undefined);
        return batch;
      }
    }
    return this.end(auth, batch, signal);
  }

  async cancel(auth: AuthSlice, owner: string, id: string, signal: AbortSignal): Promise<StoredBatch> {
    const batch = await this.dependencies.store.batch(owner, id);
    if (!batch) throw batchNotFound(id, 'batch_id');
    assertProvider(batch.provider, auth);
    if (TERMINAL.has(batch.status) || !batch.upstream || batch.upstream.ended) {
      throw errors.invalidRequest(`A batch that is ${batch.status} cannot be cancelled.`, { param: 'batch_id', code: 'batch_not_cancellable' });
    }
    const adapter = this.adapter(auth);
    const options = { signal, maxBytes: this.dependencies.maxAnswerBytes };
    await sendBatchRequest(this.dependencies.upstream, auth, adapter.cancel(batch.upstream, auth.target), options);
    // Not every provider answers a cancel with the batch (Gemini's is empty): its state is read again.
    const answer = await sendBatchRequest(this.dependencies.upstream, auth, adapter.retrieve(batch.upstream, auth.target), options);
    applyState(batch, readUpstream(auth.provider.id, () => adapter.state(upstreamJson(answer, auth.provider.id))));
    if (batch.status === 'in_progress' || batch.status === 'validating') batch.status = 'cancelling';
    batch.cancelling_at ??= seconds();
    if (!batch.upstream.ended) {
      await this.dependencies.store.putBatch(batch);
      this.log(auth, batch, undefined);
      return batch;
    }
    return this.end(auth, batch, signal);
  }

  /**
   * An ended batch, once: its results read into the output and error files, its status and counts
   * set, what ran charged at the batch price (the reservation released), its log entry written. Only
   * the request that claims the end does this; another gets the batch as stored (`finalizing`).
   */
  private async end(auth: AuthSlice, batch: StoredBatch, signal: AbortSignal): Promise<StoredBatch> {
    const { store } = this.dependencies;
    const claimant = randomUUID();
    if (!(await store.claimEnd(batch.id, claimant))) {
      // Another request is ending it: the stored batch once it has ended, else this one (`finalizing`).
      const stored = await store.batch(batch.owner, batch.id);
      return stored && TERMINAL.has(stored.status) ? stored : batch;
    }
    try {
      const adapter = this.adapter(auth);
      const state = batch.upstream!;
      const results = await this.results(auth, adapter, state, signal);
      const content = await store.content(batch.owner, batch.input_file_id);
      const parsed = content === undefined ? undefined : parseBatchInput(content, batch.endpoint, auth.provider, adapter);
      // The input file deleted meanwhile: each line's model is all the mapping back has.
      const input =
        parsed && parsed.errors.length === 0 && parsed.requests.length === batch.lines.length
          ? parsed
          : { customIds: batch.lines.map((line) => line.customId), requests: batch.lines.map((line) => ({ model: line.model, messages: [] }) as ChatRequest) };
      const unreported = state.status === 'expired' ? 'expired' : state.status === 'cancelled' || state.status === 'cancelling' ? 'cancelled' : 'missing';
      const outcome = batchOutcome(results, input, auth.provider, auth.target, state.id, unreported);
      const now = seconds();
      const ended: StoredBatch = { ...batch, status: state.status === 'cancelling' ? 'cancelled' : state.status, costUsd: batchCostUsd(outcome.ran, this.price(auth)) };
      ended.request_counts = { total: batch.request_counts.total, completed: outcome.summary.succeeded, failed: batch.request_counts.total - outcome.summary.succeeded };
      if (ended.status === 'completed') ended.completed_at = now;
      else if (ended.status === 'expired') ended.expired_at = now;
      else if (ended.status === 'cancelled') ended.cancelled_at = now;
      else ended.failed_at = now;
      if (ended.status === 'failed') ended.errors = { object: 'list', data: [{ code: 'batch_failed', message: state.failure ?? `The provider "${auth.provider.id}" failed the batch.`, param: null, line: null }] };
      ended.output_file_id = await this.resultFile(batch, 'output', outcome.output);
      ended.error_file_id = await this.resultFile(batch, 'error', outcome.errors);
      await store.putBatch(ended);
      // Stored as ended first, so that a failure now can never charge the batch twice.
      await settleBatch(this.dependencies, batchReservation(batch.reservation), ended.costUsd!).catch(() => {});
      this.log(auth, ended, outcome);
      return ended;
    } catch (error) {
      await store.releaseEnd(batch.id, claimant).catch(() => {});
      throw error;
    }
  }

  /**
   * An ended batch's line results: none when the provider wrote none (the adapter names no
   * request), or when a batch that did not complete has no results file (404: nothing ran).
   */
  private async results(auth: AuthSlice, adapter: BatchAdapter, state: ProviderBatchState, signal: AbortSignal): Promise<BatchLineResult[]> {
    const request = adapter.results(state, auth.target);
    if (request === undefined) return [];
    let answer: Buffer;
    try {
      answer = await sendBatchRequest(this.dependencies.upstream, auth, request, { signal, maxBytes: this.dependencies.maxAnswerBytes });
    } catch (error) {
      if (error instanceof GatewayError && error.status === 404 && state.status !== 'completed') return [];
      throw error;
    }
    return readUpstream(auth.provider.id, () => adapter.lineResults(answer, state));
  }

  /** Stores one result file (`batch_output`), owned like the batch; undefined when it has no line. */
  private async resultFile(batch: StoredBatch, kind: 'output' | 'error', lines: string[]): Promise<string | undefined> {
    if (lines.length === 0) return undefined;
    const content = `${lines.join('\n')}\n`;
    const id = newFileId();
    const file = { id, owner: batch.owner, provider: batch.provider, filename: `${batch.id}_${kind}.jsonl`, purpose: 'batch_output', bytes: Buffer.byteLength(content), created_at: seconds() };
    await this.dependencies.store.putFile(file, content);
    return id;
  }

  /** Writes the batch's one log entry in its current state (each write replaces the last: `replaces`). */
  private log(auth: AuthSlice, batch: StoredBatch, outcome: Parameters<typeof batchLogEntry>[2]): void {
    // A batch made before its entry had an id of its own is logged once, when it ends.
    if (batch.logId === undefined && !TERMINAL.has(batch.status)) return;
    const entry = batchLogEntry(batch, auth.caller, outcome, Date.now());
    for (const sink of this.dependencies.sinks()) sink.write(entry);
  }
}
