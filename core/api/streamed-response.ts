import { type AnswerText, streamRestorer, type TextChoice } from '../guardrails/output/index.js';
import type { ForwardSlice, GatewayContext, GatewayResponse } from '../pipeline/context.js';
import type { ProviderPlugin, StreamingAdapter } from '../spec/provider.js';
import type { Usage } from '../spec/unified.js';
import { type AnswerRendering, renderAnswer, respondWithProtocol } from './protocol-respond.js';
import type { RelayedChunk, StreamShape } from './stream-relay.js';

export interface StreamableRequest {
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
}

export interface StreamableResponse {
  choices: TextChoice[];
  usage?: Usage | null;
  model?: string;
}

/** What differs between the operations that stream (chat, text completions). */
export interface StreamableOperation<Response extends StreamableResponse, Chunk extends RelayedChunk & { choices: TextChoice[] }> {
  readonly shape: StreamShape<Chunk>;
  /** The response with only the fields of the OpenAI schema. */
  strictResponse(response: Response): Response;
  /** A whole response as the SSE events of a stream, `[DONE]` included. */
  asStream(response: Response, includeUsage: boolean, strict: boolean): string;
  /** Where the answer's text is, for the request's output judge (guardrails) when one is installed. */
  readonly text: AnswerText<Response, Chunk>;
}

const includesUsage = (context: GatewayContext): boolean => (context.request.body as StreamableRequest).stream_options?.include_usage === true;

/** The unified API's rendering of a whole answer: SSE chunks (`[DONE]` included), or JSON stripped to the OpenAI schema when strict. */
function unifiedRendering<Response extends StreamableResponse, Chunk extends RelayedChunk & { choices: TextChoice[] }>(
  context: GatewayContext,
  operation: StreamableOperation<Response, Chunk>,
): AnswerRendering<Response> {
  return {
    events: (answer) => operation.asStream(answer, includesUsage(context), context.strict),
    json: (answer) => (context.strict ? operation.strictResponse(answer) : answer),
  };
}

/**
 * The response side of an operation of the unified API that may stream (chat, text completions),
 * through the one response path (`respondWithProtocol`): a stream is relayed as the unified API's
 * chunks; a JSON answer is mapped, judged and sent as JSON or as a stream. Usage and model go to the
 * transform slice for the log entry.
 */
export async function respondStreamable<Request extends StreamableRequest, Response extends StreamableResponse, Chunk extends RelayedChunk & { choices: TextChoice[] }>(
  context: GatewayContext,
  provider: ProviderPlugin,
  forward: ForwardSlice,
  adapter: StreamingAdapter<Request, Response, Chunk> | undefined,
  operation: StreamableOperation<Response, Chunk>,
): Promise<GatewayResponse> {
  const auth = context.auth;
  const transform = context.transform;
  if (!adapter || !auth || !transform) throw new Error(`${context.operation} response without adapter, auth or transform slice`);
  const judge = context.guardrail?.output;
  return respondWithProtocol(context, provider, forward, {
    adapter,
    sent: context.request.body as Request,
    target: auth.target,
    relay: (mapper) => ({
      mapper,
      shape: operation.shape,
      includeUsage: includesUsage(context),
      strict: context.strict,
      judge: judge?.stream(operation.text),
      restore: streamRestorer(context),
      record: context.cache?.recorder,
    }),
    async whole(mapped) {
      context.cache?.recorder?.answer(mapped);
      const answer = await judgedAnswer(context, mapped, operation);
      if (answer.usage) transform.usage = answer.usage;
      if (answer.model) transform.model = answer.model;
      return answer;
    },
    render: unifiedRendering(context, operation),
  });
}

/** A whole answer judged by the request's output guardrails, when it has any. */
const judgedAnswer = async <Response extends StreamableResponse, Chunk extends RelayedChunk & { choices: TextChoice[] }>(
  context: GatewayContext,
  mapped: Response,
  operation: StreamableOperation<Response, Chunk>,
): Promise<Response> => {
  const judge = context.guardrail?.output;
  return judge ? judge.response(mapped, operation.text) : mapped;
};

/**
 * A whole answer stored by the response cache as the client's response: judged by the request's
 * output guardrails, then the events of a stream when the request streams, else JSON (stripped to
 * the OpenAI schema when strict).
 */
export async function wholeAnswer<Response extends StreamableResponse, Chunk extends RelayedChunk & { choices: TextChoice[] }>(
  context: GatewayContext,
  stored: Response,
  operation: StreamableOperation<Response, Chunk>,
): Promise<GatewayResponse> {
  return renderAnswer(context, await judgedAnswer(context, stored, operation), unifiedRendering(context, operation));
}
