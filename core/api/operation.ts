import type { IncomingMessage } from 'node:http';
import { type BodyReadOptions, readChunks, WholeBody } from '../http/body.js';
import { bodyFailure } from '../http/upstream.js';
import { answerTooLarge } from '../http/upstream-answer.js';
import { errors, GatewayError } from '../errors.js';
import type { ForwardSlice, GatewayContext, GatewayResponse, RequestSlice } from '../pipeline/context.js';
import type { CacheableOperation } from '../cache/cacheable.js';
import type { ProviderPlugin, ProviderTarget, UpstreamRequest } from '../spec/provider.js';
import type { OperationName } from '../spec/unified.js';
import type { GuardrailParameters } from '../spec/guardrail.js';
import type { ConversationMask } from '../guardrails/slice.js';

export { mapAnswer, MAX_UPSTREAM_ANSWER_BYTES, readUpstreamAnswer } from '../http/upstream-answer.js';

/**
 * One operation of the unified API, as the core handles it: how its request is read and validated,
 * how the provider's adapter turns it into an upstream request, and how a successful upstream
 * answer becomes the client's response. The transform stage dispatches on `context.operation`.
 */
export interface OperationHandler {
  readonly name: OperationName;
  /** The HTTP method of its route; POST when absent. */
  readonly method?: 'GET' | 'POST';
  /**
   * Reads and validates the client's request (400/413 on failure), counting what it holds in memory
   * on `options.lease` (503 past the budget) and refusing a stalled body (408). Runs only once the
   * caller is authenticated.
   */
  parse(request: IncomingMessage, options: { bodyLimitBytes: number; strict: boolean } & BodyReadOptions): Promise<RequestSlice>;
  /** Builds the upstream request; throws a 400 when the provider lacks the operation. */
  toUpstream(context: GatewayContext, provider: ProviderPlugin, target: ProviderTarget): UpstreamRequest;
  /** Maps a 2xx upstream answer to the response. Upstream errors are mapped by the transform stage. */
  respond(context: GatewayContext, provider: ProviderPlugin, forward: ForwardSlice): Promise<GatewayResponse>;
  /** When false, upstream error statuses are passed back as received instead of being mapped. */
  readonly mapsErrors: boolean;
  /**
   * How the response cache may serve this operation's answers again (docs/cache.md, "Making an
   * operation cacheable"); absent: never cached.
   */
  /**
   * What input guardrails judge of this operation's request (its texts and parameters) and how a
   * transform verdict rewrites it; absent: the text field the guardrail stage knows for the
   * operation (`prompt`, `input`), if any.
   */
  readonly judged?: (body: unknown) => JudgedRequest;
  /**
   * What the earlier turns of the conversation this request continues carried for the input chain
   * (the Responses API's `previous_response_id`: opened from the vault), read by the guardrail stage
   * before it judges the input; undefined when it continues none or nothing was kept.
   */
  readonly carried?: (context: GatewayContext) => Promise<ConversationMask | undefined>;
  readonly cache?: CacheableOperation<any, any>;
  /**
   * The JSON body of an error on this operation's route (the gateway's own and mapped upstream
   * ones); absent: the OpenAI shape, `{"error": {…}}`. An inbound protocol with its own error shape
   * (Messages) renders it here.
   */
  renderError?(error: GatewayError): unknown;
  /**
   * A whole response for an error the protocol does not report as one (the Gemini API answers an
   * input guardrail's denial as a blocked prompt, with a 200); undefined: the error is rendered.
   */
  errorResponse?(error: GatewayError, context: GatewayContext): GatewayResponse | undefined;
  /**
   * Fields of the client's request the mapping for the current attempt left out because the
   * provider cannot take them (recorded in the log entry); read right after `toUpstream`.
   */
  dropped?(context: GatewayContext): readonly string[] | undefined;
  /**
   * An answer the gateway gives itself, without calling the provider (an estimate where the
   * provider has no such endpoint); undefined: the request goes upstream. Run by the transform
   * stage before mapping, for the request's first target.
   */
  answerLocally?(context: GatewayContext, provider: ProviderPlugin): Promise<GatewayResponse | undefined>;
}

/** What input guardrails judge of a request, and how their transform verdict rewrites it. */
export interface JudgedRequest {
  readonly texts: string[];
  readonly parameters: GuardrailParameters;
  /** The request body with rewritten texts and parameters; absent when the operation has none to rewrite. */
  readonly rewrite?: (texts: readonly string[], parameters: GuardrailParameters) => unknown;
}

/** Thrown inside a read to stop it once enough has been read. */
const ENOUGH = Symbol('enough');

/**
 * Reads the first `limit` bytes of an upstream error body, for mapping; then stops reading (which
 * cancels the rest of the body). The bytes count against the answer's memory lease.
 */
export async function readErrorBody(forward: ForwardSlice, signal: AbortSignal, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    await readChunks(forward.body, (chunk) => {
      const kept = chunk.byteLength > limit - size ? chunk.subarray(0, limit - size) : chunk;
      forward.memory.grow(kept.byteLength);
      chunks.push(kept);
      size += kept.byteLength;
      if (size >= limit) throw ENOUGH;
    });
  } catch (error) {
    if (error !== ENOUGH) {
      forward.memory.release();
      throw bodyFailure(error, forward.origin, signal);
    }
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

/** The 400 for an operation the selected provider does not offer (`route` as in `POST /v1/embeddings`). */
export function unsupportedOperation(provider: string, operation: OperationName, route: string): GatewayError {
  return errors.invalidRequest(`The provider "${provider}" does not support the operation "${operation}" (${route}).`, {
    param: 'x-gateway-provider',
    code: 'unsupported_operation',
  });
}

/**
 * What an answer parsed as JSON holds in memory, in multiples of its size: the bytes read, their
 * joined copy, the decoded text, the parsed value and the serialised response (measured: a 250 MB
 * answer took the gateway's RSS up by ~1.3 GB). Its lease is grown by this much per byte read, so
 * the budget refuses it before the copies are made.
 */
export const JSON_ANSWER_COPIES = 5;

/**
 * Reads the whole answer of `forward` within its per-answer cap and memory lease. A declared length
 * over the cap is refused before reading; a failure while reading (reset, short body, stall, the
 * deadline, the client gone) becomes its specific error (`bodyFailure`).
 */
export async function readWholeAnswer(forward: ForwardSlice, provider: string, signal: AbortSignal, copies = 1): Promise<Buffer> {
  const declared = Number(forward.headers['content-length']);
  if (declared > forward.maxAnswerBytes) {
    forward.body.destroy();
    throw answerTooLarge(forward.maxAnswerBytes, provider);
  }
  const answer = new WholeBody(forward.body, forward.maxAnswerBytes, answerTooLarge, provider, forward.memory, copies);
  try {
    await answer.run(declared);
    return answer.bytes();
  } catch (error) {
    // What was read is dropped: give it back now, not when the error response closes.
    forward.memory.release();
    throw bodyFailure(error, forward.origin, signal);
  }
}

/**
 * Reads a whole upstream body as JSON; a body that is not JSON is the provider's fault (502). The
 * bytes come back too: an answer that needs no change is sent to the client as received. The
 * answer's lease counts {@link JSON_ANSWER_COPIES} times its bytes.
 */
export async function readUpstreamJson(forward: ForwardSlice, provider: string, signal: AbortSignal): Promise<{ value: unknown; bytes: Buffer; text: string }> {
  const bytes = await readWholeAnswer(forward, provider, signal, JSON_ANSWER_COPIES);
  const text = bytes.toString('utf8');
  try {
    return { value: JSON.parse(text), bytes, text };
  } catch {
    throw errors.badGateway(`The provider "${provider}" answered with a body that is not JSON.`, { code: 'upstream_invalid_json' });
  }
}
