import { streamRestorer } from '../../../guardrails/output/index.js';
import type { GatewayContext, GatewayResponse } from '../../../pipeline/context.js';
import type { ProviderPlugin, ProviderTarget } from '../../../spec/provider.js';
import type { ResponseEvent, ResponseObject, ResponsesRequest } from '../../../spec/responses.js';
import type { ChatCompletionChunk, ChatRequest, ChatResponse } from '../../../spec/unified.js';
import { chatAnswerText } from '../../answer-text.js';
import { type AnswerRendering, type ProtocolAnswer, renderAnswer } from '../../protocol-respond.js';
import { responseAsEvents } from './responses-events.js';
import { responseFromChat } from './responses-from-chat.js';
import { judgeResponse, nativeAnswerText, type NativeChunk, NativeResponsesOutput, nativeResponsesRestorer } from './responses-native-stream.js';
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
  return { auth, transform, request: context.request.body as ResponsesRequest };
};

/** A Response as the client gets it: its events when the request streams, else JSON (`clientResponse`: the output items `include` asks for). */
const responseRendering = (include: ResponsesRequest['include']): AnswerRendering<ResponseObject> => ({
  events: (response) => responseAsEvents(response, include),
  json: (response) => clientResponse(response, include),
});

/** A stored Response served again by the response cache, judged again by the output guardrails. */
export async function replayResponse(context: GatewayContext, response: ResponseObject): Promise<GatewayResponse> {
  const judge = context.guardrail?.output;
  const judged = judge ? await judgeResponse(response, judge) : response;
  return renderAnswer(context, judged, responseRendering((context.request.body as ResponsesRequest).include));
}

/** A provider without the native API: its chat answer, plain or streamed, as the Response or its events. */
export function translatedResponseAnswer(
  context: GatewayContext,
  provider: ProviderPlugin,
  attempt: Extract<Attempt, { kind: 'translated' }> & { state: { id: string; createdAt: number } },
  finished: Finished,
): ProtocolAnswer<ChatRequest, ChatResponse, ChatCompletionChunk, ChatCompletionChunk, ResponseObject> {
  const { transform, request } = slices(context);
  const shell = responseShell(request, attempt.state.id, attempt.state.createdAt);
  const judge = context.guardrail?.output;
  const record = async (response: ResponseObject) => {
    transform.model ??= response.model;
    await finished(response);
  };
  return {
    adapter: provider.operations.chat!,
    sent: attempt.chatRequest,
    target: attempt.target,
    headers: droppedToolsHeader(attempt.translated.droppedTools),
    relay: (mapper) => ({
      mapper,
      judge: judge?.stream(chatAnswerText),
      restore: streamRestorer(context),
      encoder: new ResponsesStreamEncoder({ shell, tools: attempt.translated.tools, provider: provider.id, include: request.include, finished: record }),
    }),
    async whole(mapped) {
      const answer = judge ? await judge.response(mapped, chatAnswerText) : mapped;
      if (answer.usage) transform.usage = answer.usage;
      const response = responseFromChat(shell, answer, attempt.translated.tools, provider.id);
      await record(response);
      return response;
    },
    render: responseRendering(request.include),
  };
}

/** A provider that speaks the Responses API: its answer relayed (judged, usage read, stored). */
export function nativeResponseAnswer(
  context: GatewayContext,
  provider: ProviderPlugin,
  attempt: Extract<Attempt, { kind: 'native' }>,
  finished: Finished,
): ProtocolAnswer<ResponsesRequest, ResponseObject, ResponseEvent, NativeChunk, ResponseObject> {
  const { auth, transform, request } = slices(context);
  const judge = context.guardrail?.output;
  // The gateway keeps the conversation and sends it in `input` (nativeBody), so the provider's
  // Response says `previous_response_id: null`; the client is shown the id it sent, as OpenAI does.
  const previousResponseId = typeof request.previous_response_id === 'string' && attempt.body.previous_response_id === undefined ? request.previous_response_id : undefined;
  const record = async (response: ResponseObject) => {
    const usage = chatUsage(response.usage);
    if (usage) transform.usage = usage;
    if (response.model) transform.model = response.model;
    await finished(response);
  };
  return {
    adapter: provider.operations.responses!,
    sent: attempt.body,
    target: auth.target,
    headers: droppedToolsHeader(attempt.droppedTools),
    relay(upstream) {
      const { mapper, output } = NativeResponsesOutput.create(upstream, { include: request.include, finished: record, previousResponseId });
      return { mapper, judge: judge?.stream(nativeAnswerText), restore: nativeResponsesRestorer(context.guardrail?.restorer), encoder: output };
    },
    async whole(answered) {
      const mapped = previousResponseId === undefined ? answered : { ...answered, previous_response_id: previousResponseId };
      const response = judge ? await judgeResponse(mapped, judge) : mapped;
      await record(response);
      return response;
    },
    // The provider's Response is sent as it is (its bytes as received when nothing changed it).
    render: { events: (response) => responseAsEvents(response, request.include), json: (response) => response },
  };
}
