import { randomBytes } from 'node:crypto';
import type { BatchStatus, ProviderBatchState } from '../../spec/batches.js';
import type { SharedState } from '../../store/state.js';
import type { BatchReservation } from './batch-money.js';

/**
 * The files and batches the gateway keeps for translated providers, in the shared state (SQLite
 * under the data directory, or Redis), so every instance serves them. Each record carries its
 * owner (the caller's key: `account` or `vk:<id>`); a read by another owner finds nothing, as for
 * an id that does not exist. A file's content is a record of its own, so listing reads no content.
 */

/** A file as OpenAI's `/v1/files` describes it, plus its owner and provider. */
export interface StoredFile {
  readonly id: string;
  readonly owner: string;
  /** The provider the file was uploaded for (a batch input) or came from (an output). */
  readonly provider: string;
  readonly filename: string;
  readonly purpose: string;
  readonly bytes: number;
  /** Epoch seconds. */
  readonly created_at: number;
}

/** One line of a batch's input as the gateway keeps it: the caller's `custom_id` and the request's model. */
export interface BatchLineRecord {
  readonly customId: string;
  readonly model: string;
}

/** A translated batch: OpenAI's fields, the provider's batch, and what charging it needs. */
export interface StoredBatch {
  readonly id: string;
  readonly owner: string;
  readonly provider: string;
  readonly endpoint: string;
  readonly input_file_id: string;
  readonly completion_window: string;
  readonly metadata: Readonly<Record<string, string>> | null;
  status: BatchStatus;
  readonly created_at: number;
  in_progress_at?: number;
  finalizing_at?: number;
  completed_at?: number;
  failed_at?: number;
  expired_at?: number;
  cancelling_at?: number;
  cancelled_at?: number;
  readonly expires_at: number;
  output_file_id?: string;
  error_file_id?: string;
  errors?: { readonly object: 'list'; readonly data: ReadonlyArray<{ code: string; message: string; param?: string | null; line?: number | null }> };
  request_counts: { total: number; completed: number; failed: number };
  /** The provider's batch (absent when it was never created: a batch that failed validation). */
  upstream?: ProviderBatchState;
  /** The caller's custom ids and models, by line index (the provider's ids are `r<index>`). */
  readonly lines: readonly BatchLineRecord[];
  /**
   * The reservation made at creation at every level of the caller (`BatchReservation`; a batch
   * made before levels holds its key's alone: `{key, nanos, keyId}`); absent for a caller no level binds.
   */
  readonly reservation?: BatchReservation | { readonly key: string; readonly nanos: number; readonly keyId: string };
  /** The id of the batch's one log entry, written at creation and replaced as the batch progresses. */
  readonly logId?: string;
  /** Cost charged when the batch ended (USD). */
  costUsd?: number;
}

const FILE = 'batch-file:';
const CONTENT = 'batch-file-content:';
const BATCH = 'batch:';
const filesOf = (owner: string) => `batch-files:${owner}`;
const batchesOf = (owner: string) => `batches:${owner}`;

/**
 * A gateway file id (`file-gw_…`): the gateway, not the provider, holds it. The underscore keeps the
 * form apart from OpenAI's ids (`file-` and letters and digits); a provider's id that looks like one
 * anyway is still passed through when the gateway holds no such file (see `withBatches`).
 */
export const isGatewayFileId = (id: string): boolean => id.startsWith('file-gw_');
/** A gateway batch id (`batch_gw_…`). */
export const isGatewayBatchId = (id: string): boolean => id.startsWith('batch_gw_');

export const newFileId = (): string => `file-gw_${randomBytes(12).toString('hex')}`;
export const newBatchId = (): string => `batch_gw_${randomBytes(12).toString('hex')}`;

/** Files and batches by owner, over the shared state's records. */
export class BatchStore {
  constructor(private readonly state: () => SharedState) {}

  async putFile(file: StoredFile, content: string): Promise<void> {
    const state = this.state();
    await state.records.set(CONTENT + file.id, content);
    await state.records.set(FILE + file.id, file);
    await state.addToSet(filesOf(file.owner), file.id);
  }

  /** The file, when `owner` owns it. */
  async file(owner: string, id: string): Promise<StoredFile | undefined> {
    const file = (await this.state().records.get(FILE + id)) as StoredFile | undefined;
    return file?.owner === owner ? file : undefined;
  }

  async content(owner: string, id: string): Promise<string | undefined> {
    if ((await this.file(owner, id)) === undefined) return undefined;
    return (await this.state().records.get(CONTENT + id)) as string | undefined;
  }

  async files(owner: string): Promise<StoredFile[]> {
    const ids = await this.state().members(filesOf(owner));
    const found = await Promise.all(ids.map((id) => this.file(owner, id)));
    return found.filter((file): file is StoredFile => file !== undefined);
  }

  async deleteFile(owner: string, id: string): Promise<boolean> {
    if ((await this.file(owner, id)) === undefined) return false;
    const state = this.state();
    await state.records.delete(FILE + id);
    await state.records.delete(CONTENT + id);
    await state.removeFromSet(filesOf(owner), id);
    return true;
  }

  /** Whether the gateway holds a file or batch of this id, whoever owns it. */
  async holds(kind: 'files' | 'batches', id: string): Promise<boolean> {
    return (await this.state().records.get((kind === 'files' ? FILE : BATCH) + id)) !== undefined;
  }

  async putBatch(batch: StoredBatch): Promise<void> {
    const state = this.state();
    await state.records.set(BATCH + batch.id, batch);
    await state.addToSet(batchesOf(batch.owner), batch.id);
  }

  async batch(owner: string, id: string): Promise<StoredBatch | undefined> {
    const batch = (await this.state().records.get(BATCH + id)) as StoredBatch | undefined;
    return batch?.owner === owner ? batch : undefined;
  }

  async batches(owner: string): Promise<StoredBatch[]> {
    const ids = await this.state().members(batchesOf(owner));
    const found = await Promise.all(ids.map((id) => this.batch(owner, id)));
    return found.filter((batch): batch is StoredBatch => batch !== undefined);
  }

  /** Claims the one-time end of a batch (results read, cost charged, entry logged) for this caller; false when another instance or request has it. */
  claimEnd(id: string, claimant: string): Promise<boolean> {
    return this.state().claim(`batch-end:${id}`, claimant);
  }

  releaseEnd(id: string, claimant: string): Promise<void> {
    return this.state().release(`batch-end:${id}`, claimant);
  }
}
