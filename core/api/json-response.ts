import type { ForwardSlice, GatewayContext, GatewayResponse, TransformSlice } from '../pipeline/context.js';
import type { ProviderPlugin, ProviderTarget } from '../spec/provider.js';
import { mapAnswer, readUpstreamJson } from './operation.js';
import { restoredAnswer } from '../guardrails/output/index.js';

export interface JsonAnswer<Response> {
  /** The adapter's `fromUpstream`, bound to the request. */
  map(body: unknown, target: ProviderTarget, headers: ForwardSlice['headers']): Response;
  /** The response with only the fields of the OpenAI schema. */
  strict(response: Response): Response;
  /** Puts what the log entry needs (usage, units, model) into the transform slice. */
  record(response: Response, transform: TransformSlice): void;
}

/**
 * The client's JSON body. When mapping and strict stripping left the upstream's parsed answer
 * itself (an OpenAI-shaped provider with nothing to strip), its bytes are sent as received: no
 * second serialisation, here or in the log.
 */
export function jsonBody(answer: unknown, upstream: { value: unknown; bytes: Uint8Array; text?: string }): { json: unknown; serialised?: Uint8Array; serialisedText?: string } {
  return answer === upstream.value ? { json: answer, serialised: upstream.bytes, serialisedText: upstream.text } : { json: answer };
}

/** The response side of an operation answered with one JSON body: read, map, record, strip when strict. */
export async function respondWithJson<Response>(
  context: GatewayContext,
  provider: ProviderPlugin,
  forward: ForwardSlice,
  answer: JsonAnswer<Response>,
): Promise<GatewayResponse> {
  const { auth, transform } = context;
  if (!auth || !transform) throw new Error(`${context.operation} response without auth or transform slice`);
  const parsed = await readUpstreamJson(forward, provider.id, context.signal);
  forward.endedAt = performance.now();
  const response = mapAnswer(provider.id, () => answer.map(parsed.value, auth.target, forward.headers));
  context.cache?.recorder?.answer(response);
  answer.record(response, transform);
  // What an input transform masked is put back (an image's `revised_prompt` quotes the prompt).
  return { status: 200, headers: {}, body: jsonBody(restoredAnswer(context, context.strict ? answer.strict(response) : response), parsed) };
}
