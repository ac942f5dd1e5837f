import type { GatewayContext, GatewayResponse } from '../pipeline/context.js';
import type { AnswerRecorder } from './slice.js';
import type { Usage } from '../spec/unified.js';

/**
 * How an operation opts in to the response cache: declared as `cache` on its `OperationHandler`
 * (core/api/operation.ts). The cache hook knows no operation; it asks this what identifies a
 * request's answer, which text a semantic lookup embeds, how a stream adds up to a whole answer,
 * and how a stored answer is served again. An operation without it is never cached. Its `respond`
 * reports the answer it maps (before output guardrails) to `context.cache.recorder`: whole, or
 * chunk by chunk for a stream (the stream relay does that when given the recorder).
 */
export interface CacheableOperation<Answer = unknown, Chunk = unknown> {
  /**
   * The request body as it identifies the answer: normalised so that requests which must get the
   * same answer are equal (`stream` and `stream_options` dropped, fields at their documented default
   * dropped). Undefined: this request is not cached (the cache answers BYPASS).
   */
  identity(body: unknown): Readonly<Record<string, unknown>> | undefined;
  /**
   * Semantic mode: the text of the request that is embedded and compared, and the rest of the
   * identity, which a semantic hit must match exactly (model and parameters). Undefined: only exact
   * lookups for this request.
   */
  semantic?(identity: Readonly<Record<string, unknown>>): { readonly text: string; readonly rest: unknown } | undefined;
  /** Adds streamed chunks up to the whole answer (absent: the operation does not stream). */
  assemble?(): StreamAssembly<Chunk, Answer>;
  /** Whether an answer may be stored: complete and not filtered (`finish_reason: content_filter`). */
  storable(answer: Answer): boolean;
  /** The usage and model an answer reports, for the cost a hit saves. */
  usage(answer: Answer): { readonly usage?: Usage; readonly model?: string };
  /**
   * The client's response from a stored answer: judged by the request's output guardrails, stripped
   * to the OpenAI schema when strict, and as the events of a stream when the request streams.
   */
  replay(context: GatewayContext, answer: Answer): Promise<GatewayResponse>;
}

/** Adds up the chunks of one stream, as mapped and before output guardrails. */
export interface StreamAssembly<Chunk, Answer> {
  push(chunk: Chunk): void;
  /** The whole answer once the stream is complete; undefined when the chunks did not make one. */
  result(): Answer | undefined;
}

/**
 * Drops the fields of `body` that do not change the answer (`stream`, `stream_options`), those set
 * to null (the API's "default") and those equal to their documented default, so that
 * `{"temperature": 1}` and no temperature are one key.
 */
export function withoutDefaults(body: Readonly<Record<string, unknown>>, defaults: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const identity: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    if (field === 'stream' || field === 'stream_options' || value === undefined || value === null) continue;
    if (Object.hasOwn(defaults, field) && defaults[field] === value) continue;
    identity[field] = value;
  }
  return identity;
}

/**
 * A recorder for a stream relay whose chunks are not the operation's answer (a protocol translated
 * to chat, a protocol's native events): the chunks are added up by `assembly`, and once the stream
 * is complete its result, made the answer by `finish`, is reported whole to `recorder`, then
 * `recorder.complete()` stores it. Undefined without a recorder (nothing to store).
 */
export function assembledRecorder<Chunk, Assembled, Answer>(
  recorder: AnswerRecorder | undefined,
  assembly: StreamAssembly<Chunk, Assembled>,
  finish: (assembled: Assembled) => Answer,
): AnswerRecorder | undefined {
  if (recorder === undefined) return undefined;
  return {
    answer: (answer) => recorder.answer(answer),
    chunk: (chunk) => assembly.push(chunk as Chunk),
    async complete() {
      const assembled = assembly.result();
      if (assembled === undefined) return;
      recorder.answer(finish(assembled));
      await recorder.complete();
    },
  };
}
