import { SseDecoder } from '../../../http/sse.js';
import type { ForwardSlice, GatewayContext, GatewayResponse } from '../../../pipeline/context.js';
import type { ProviderPlugin, ProviderTarget } from '../../../spec/provider.js';
import type { ResponseObject, ResponsesRequest } from '../../../spec/responses.js';
import type { ChatRequest } from '../../../spec/unified.js';
import { chatAnswerText } from '../../answer-text.js';
import { jsonBody } from '../../json-response.js';
import { mapAnswer, readUpstreamJson } from '../../operation.js';
import { relayStream } from '../../stream-relay.js';
import { SSE_HEADERS, relayObserver } from '../../streamed-response.js';
import { responseAsEvents } from './responses-events.js';
import { responseFromChat } from './responses-from-chat.js';
import { judgeResponse, nativeAnswerText, NativeResponsesOutput } from './responses-native-stream.js';
import { chatUsage, clientResponse, responseShell } from './responses-objects.js';
import { ResponsesStreamEncoder } from './responses-stream-encoder.js';
import type { TranslatedRequest } from './responses-to-chat.js';

/** How one attempt was sent: natively, or translated to chat. */
export type Attempt =
  | { readonly kind: 'native'; readonly body: ResponsesRequest; readonly dropped: string[]; readonly droppedTools: string[] }
  | { readonly kind: 'translated'; readonly translated: TranslatedRequest; readonly chatRequest: ChatRequest; readonly target: ProviderTarget };

/** Stores the finished Response (unless `store: false`) before the client's last event or body. */
export type Finished = (response: ResponseObject) => Promise<void>;

/** The response header naming the built-in tools the provider could not run (dropped). */
const droppedToolsHeader = (tools: readonly string[]): Record<string, string> => (tools.length > 0 ? { 'x-gateway-dropped-tools': [...new Set(tools)].join(', ') } : {});

const slices = (context: GatewayContext) => {
  const { auth, transform } = context;
  if (!auth || !transform) throw new Error('responses answer without auth or transform slice');
  return { auth, transform };
};

const isJson = (forward: ForwardSlice): boolean => String(forward.headers['content-type'] ?? '').startsWith('application/json');

/** A provider without the native API: its chat answer, plain or streamed, as the Response or its events. */
export async function respondTranslated(
  context: GatewayContext,
  provider: ProviderPlugin,
  forward: ForwardSlice,
  attempt: Extract<Attempt, { kind: 'translated' }> & { state: { id: string; createdAt: number } },
  finished: Finished,
): Promise<GatewayResponse> {
  const { transform } = slices(context);
  const adapter = provider.operations.chat!;
  const request = context.request.body as ResponsesRequest;
  const shell = responseShell(request, attempt.state.id, attempt.state.createdAt);
  const judge = context.guardrail?.output;
  const headers = droppedToolsHeader(attempt.translated.droppedTools);
  const record = async (response: ResponseObject) => {
    transform.model ??= response.model;
    await finished(response);
  };
  if (context.request.streaming && adapter.stream && !isJson(forward)) {
    const stream = adapter.stream;
    const encoder = new ResponsesStreamEncoder({ shell, tools: attempt.translated.tools, provider: provider.id, include: request.include, finished: record });
    const body = relayStream({
      upstream: forward.body,
      origin: new URL(transform.upstreamRequest.url).origin,
      decoder: stream.createDecoder?.() ?? new SseDecoder(),
      mapper: stream.createMapper(attempt.chatRequest, attempt.target),
      signal: context.signal,
      provider: provider.id,
      judge: judge?.stream(chatAnswerText),
      observe: relayObserver(transform, forward),
      encoder,
    });
    return { status: 200, headers: { ...SSE_HEADERS, ...headers }, body: { stream: body } };
  }
  const parsed = await readUpstreamJson(forward, provider.id, context.signal);
  forward.endedAt = performance.now();
  const mapped = mapAnswer(provider.id, () => adapter.fromUpstream(parsed.value, attempt.chatRequest, attempt.target, forward.headers));
  const answer = judge ? await judge.response(mapped, chatAnswerText) : mapped;
  if (answer.usage) transform.usage = answer.usage;
  const response = responseFromChat(shell, answer, attempt.translated.tools, provider.id);
  await record(response);
  if (context.request.streaming) return { status: 200, headers: { ...SSE_HEADERS, ...headers }, body: { bytes: Buffer.from(responseAsEvents(response, request.include)) } };
  return { status: 200, headers, body: { json: clientResponse(response, request.include) } };
}

/** A provider that speaks the Responses API: its answer relayed (judged, usage read, stored). */
export async function respondNative(
  context: GatewayContext,
  provider: ProviderPlugin,
  forward: ForwardSlice,
  attempt: Extract<Attempt, { kind: 'native' }>,
  finished: Finished,
): Promise<GatewayResponse> {
  const { auth, transform } = slices(context);
  const adapter = provider.operations.responses!;
  const request = context.request.body as ResponsesRequest;
  const judge = context.guardrail?.output;
  const headers = droppedToolsHeader(attempt.droppedTools);
  // The gateway keeps the conversation and sends it in `input` (nativeBody), so the provider's
  // Response says `previous_response_id: null`; the client is shown the id it sent, as OpenAI does.
  const previousResponseId = typeof request.previous_response_id === 'string' && attempt.body.previous_response_id === undefined ? request.previous_response_id : undefined;
  const record = async (response: ResponseObject) => {
    const usage = chatUsage(response.usage);
    if (usage) transform.usage = usage;
    if (response.model) transform.model = response.model;
    await finished(response);
  };
  if (context.request.streaming && adapter.stream && !isJson(forward)) {
    const stream = adapter.stream;
    const { mapper, output } = NativeResponsesOutput.create(stream.createMapper(attempt.body, auth.target), { include: request.include, finished: record, previousResponseId });
    const body = relayStream({
      upstream: forward.body,
      origin: new URL(transform.upstreamRequest.url).origin,
      decoder: stream.createDecoder?.() ?? new SseDecoder(),
      mapper,
      signal: context.signal,
      provider: provider.id,
      judge: judge?.stream(nativeAnswerText),
      observe: relayObserver(transform, forward),
      encoder: output,
    });
    return { status: 200, headers: { ...SSE_HEADERS, ...headers }, body: { stream: body } };
  }
  const parsed = await readUpstreamJson(forward, provider.id, context.signal);
  forward.endedAt = performance.now();
  const answered = mapAnswer(provider.id, () => adapter.fromUpstream(parsed.value, attempt.body, auth.target, forward.headers));
  const mapped = previousResponseId === undefined ? answered : { ...answered, previous_response_id: previousResponseId };
  const response = judge ? await judgeResponse(mapped, judge) : mapped;
  await record(response);
  if (context.request.streaming) return { status: 200, headers: { ...SSE_HEADERS, ...headers }, body: { bytes: Buffer.from(responseAsEvents(response, request.include)) } };
  return { status: 200, headers, body: jsonBody(response, parsed) };
}
