import type { ProviderTarget, UpstreamRequest } from './provider.js';
import type { ChatRequest, ErrorBody } from './unified.js';

/**
 * Batches translated for a provider whose own batch API is not OpenAI's (`/v1/files` and
 * `/v1/batches` in OpenAI's shapes; docs/batches.md). The gateway keeps the uploaded JSONL file,
 * validates each line as a chat request, maps each line with the provider's own `chat` adapter
 * (the same mapping as a single chat call) and hands the mapped bodies to this adapter, which only
 * knows its provider's batch envelope and lifecycle. The results come back as the provider's single
 * answers, which the core maps with the same `chat` adapter into OpenAI's output and error files.
 * Pure functions, like every adapter: the core sends what they build (with `auth()` applied) and
 * hands them what came back.
 */

/** One line of a batch, mapped: its id in the provider's batch, the unified request, and the chat adapter's upstream request for it. */
export interface BatchUpstreamLine {
  /**
   * The id the provider's batch carries for this line (`r0`, `r1`, …: the line's index; the
   * caller's own `custom_id` stays with the gateway, since providers restrict theirs).
   */
  readonly customId: string;
  readonly request: ChatRequest;
  /** What `chat.toUpstream` built for the line alone (its body is the provider's single request). */
  readonly upstream: UpstreamRequest;
}

/** OpenAI's batch statuses, which the adapter maps its provider's lifecycle onto. */
export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

/** A provider's batch as the adapter reads it from a create, retrieve or cancel answer. */
export interface ProviderBatchState {
  /** The provider's id of the batch. */
  readonly id: string;
  readonly status: BatchStatus;
  /** True once the provider will process nothing more: its results can be read (`completed`, `expired`, `cancelled`, `failed`). */
  readonly ended: boolean;
  /** Lines finished so far, when the provider tells. */
  readonly counts?: { readonly succeeded: number; readonly failed: number; readonly processing: number };
  /** A failed batch's reason, as the provider gave it. */
  readonly failure?: string;
  /** Anything the adapter needs later to read the results (a results location); opaque to the core, kept with the batch. */
  readonly handle?: Readonly<Record<string, string>>;
}

/** One line's outcome in a provider's results, by the id the adapter was given ({@link BatchUpstreamLine.customId}). */
export type BatchLineResult =
  /** `body` is the provider's single answer, which the core maps with `chat.fromUpstream`. */
  | { readonly customId: string; readonly kind: 'succeeded'; readonly body: unknown }
  /** `status` is the HTTP status the line would have had on its own. */
  | { readonly customId: string; readonly kind: 'errored'; readonly status: number; readonly error: ErrorBody }
  | { readonly customId: string; readonly kind: 'expired' | 'cancelled' };

/** A provider's batch API (see the module comment). Present in `operations.batches` when the provider has one. */
export interface BatchAdapter {
  /** The OpenAI batch endpoints it takes (`/v1/chat/completions`); a batch for another is refused with 400. */
  readonly endpoints: readonly string[];
  /** Whether one batch may mix models (false: every line must name the first line's model). */
  readonly mixedModels: boolean;
  /** Most lines in one batch. */
  readonly maxLines: number;
  /**
   * For a provider whose batch jobs read their input from cloud storage (Bedrock's S3, Vertex AI's
   * Cloud Storage): the request that writes the mapped lines there, sent before {@link create}.
   * `name` is the gateway's batch id, unique, which both may use to name the objects and the job.
   */
  stage?(lines: readonly BatchUpstreamLine[], target: ProviderTarget, name: string): UpstreamRequest;
  /** Creates the batch from its mapped lines (`name` as for {@link stage}); the answer is read by {@link state}. */
  create(lines: readonly BatchUpstreamLine[], target: ProviderTarget, name: string): UpstreamRequest;
  /** Reads the provider's batch from an answer of {@link create}, {@link retrieve} or {@link cancel}. */
  state(body: unknown): ProviderBatchState;
  retrieve(batch: ProviderBatchState, target: ProviderTarget): UpstreamRequest;
  cancel(batch: ProviderBatchState, target: ProviderTarget): UpstreamRequest;
  /**
   * The request for an ended batch's results (never a host the provider named: the credential goes
   * only to the provider's own hosts); undefined when the provider wrote none (nothing ran). A
   * batch that did not complete whose results answer 404 has none either.
   */
  results(batch: ProviderBatchState, target: ProviderTarget): UpstreamRequest | undefined;
  /** Every line's outcome from the results' bytes (any order). */
  lineResults(body: Uint8Array, batch: ProviderBatchState): BatchLineResult[];
}
