import { errors, GatewayError } from '../../../errors.js';
import { parseJsonObject, readBody } from '../../../http/body.js';
import type { GatewayContext } from '../../../pipeline/context.js';
import type { Hook, Next } from '../../../pipeline/hook.js';
import type { ProviderPlugin, ProviderTarget, UpstreamRequest } from '../../../spec/provider.js';
import type { ResponseItem, ResponseObject, ResponsesRequest } from '../../../spec/responses.js';
import { type OperationHandler, unsupportedOperation } from '../../operation.js';
import { withProviderRoles } from '../../chat-completions.js';
import { newId } from './responses-objects.js';
import { responsesCache } from './responses-cache.js';
import { nativeBody } from './responses-native-body.js';
import { respondWithProtocol } from '../../protocol-respond.js';
import { type Attempt, type Finished, nativeResponseAnswer, translatedResponseAnswer } from './responses-respond.js';
import { validateResponsesRequest } from './responses-schema.js';
import { type ConversationItem, conversationOf, ownerOf, type ResponseStore } from './responses-store.js';
import { responsesParameters, responsesTexts, rewriteResponsesRequest } from './responses-texts.js';
import { toChatRequest } from './responses-to-chat.js';
import { type McpLoopOptions, mcpToolLoop, servedMcpTools } from './responses-mcp.js';
import { requestContextOf } from '../../../routing/attempt.js';
import { concealValue } from '../../../guardrails/output/index.js';
import type { ConversationMask } from '../../../guardrails/slice.js';
import type { SealedSecret } from '../../../vault/crypto.js';

/** How the Responses protocol is configured (`responses` in the gateway configuration). */
export interface ResponsesProtocolOptions {
  readonly store: ResponseStore;
  /** `drop` (default): built-in tools the provider cannot run are dropped and named in `x-gateway-dropped-tools`; `refuse`: 400. */
  readonly builtInTools: 'drop' | 'refuse';
  /** Told when a response could not be stored (the client still gets it). */
  onStoreError(error: unknown): void;
  /**
   * Seals and opens what a conversation's masking carries to its next turn (the vault); without it
   * nothing is carried and each turn masks with placeholders of its own.
   */
  readonly sealer?: {
    seal(recordId: string, plaintext: string): Promise<SealedSecret>;
    open(recordId: string, sealed: SealedSecret): Promise<string>;
  };
  /** Told when a conversation's carried mask could not be sealed or opened (never with its content). */
  onMaskError?(error: unknown): void;
  /** The `mcp` tool loop's dependencies; absent: `mcp` tools are built-in tools like any other. */
  readonly mcp?: McpLoopOptions;
}

/** The id a stored response's sealed mask is bound to: opened under any other, it fails. */
const maskRecordId = (responseId: string): string => `responses:mask:${responseId}`;

/** One request's Responses state: its ids, the conversation it continues, how the current attempt was sent. */
export interface ResponsesState {
  readonly id: string;
  readonly createdAt: number;
  readonly owner: string;
  /** The conversation of `previous_response_id`, read by the state hook. */
  history?: ConversationItem[];
  attempt?: Attempt;
}

/**
 * The chat adapter's `param` names as the Responses request names them. A chat message's index is
 * not an input item's (instructions, history and merged turns shift it): such errors name `input`.
 */
const PARAMS: ReadonlyArray<[RegExp, string]> = [
  [/^response_format/, 'text.format'],
  [/^max_(completion_)?tokens$/, 'max_output_tokens'],
  [/^messages.*$/, 'input'],
  [/^reasoning_effort$/, 'reasoning.effort'],
];

/** An error of the chat adapter with its `param` as the client named the field. */
function renamed(error: unknown): unknown {
  if (!(error instanceof GatewayError) || typeof error.body.param !== 'string') return error;
  const param = error.body.param;
  const match = PARAMS.find(([pattern]) => pattern.test(param));
  if (!match) return error;
  return new GatewayError(error.status, { ...error.body, param: param.replace(match[0], match[1]) }, error.headers);
}

/** The request's input as items with ids (a string input is one user message), as stored and listed. */
function inputItems(request: ResponsesRequest): ResponseItem[] {
  if (typeof request.input === 'string') return [{ id: newId('msg'), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: request.input }] }];
  return (request.input ?? []).map((item) => (item.id ? item : { id: newId(item.type === undefined || item.type === 'message' ? 'msg' : 'item'), ...item }));
}

/**
 * The upstream request of one attempt, recorded on the request's state: the request as it is (the
 * conversation spelled out) to a provider that declares the native `responses` operation, else
 * translated to the provider's chat.
 */
function attemptUpstream(options: ResponsesProtocolOptions, state: ResponsesState, context: GatewayContext, provider: ProviderPlugin, target: ProviderTarget): UpstreamRequest {
  const request = context.request.body as ResponsesRequest;
  const native = provider.operations.responses;
  if (native && (!context.request.streaming || native.stream)) {
    const built = nativeBody(request, state.history, provider.id, native.builtInTools, options.builtInTools === 'refuse');
    native.validate?.(built.body);
    state.attempt = { kind: 'native', body: built.body, dropped: built.dropped, droppedTools: built.droppedTools };
    return native.toUpstream(built.body, target, built.unchanged ? context.request.raw : undefined);
  }
  const chat = provider.operations.chat;
  if (!chat || (context.request.streaming && !chat.stream)) throw unsupportedOperation(provider.id, 'responses', 'POST /v1/responses');
  try {
    const translated = toChatRequest(request, (state.history ?? []).map((entry) => entry.item), { provider: provider.id, builtInTools: options.builtInTools });
    const chatRequest = withProviderRoles(translated.chat, provider);
    // Reasoning comes back only when the provider may add its extra fields (`content_blocks`).
    const loose = { ...target, strict: false };
    chat.validate?.(chatRequest);
    state.attempt = { kind: 'translated', translated, chatRequest, target: loose };
    return chat.toUpstream(chatRequest, loose);
  } catch (error) {
    throw renamed(error);
  }
}

/** What happens to the finished Response before the client's last event or body: the response cache, then the store (unless `store: false`). */
function storeFinished(options: ResponsesProtocolOptions, state: ResponsesState, context: GatewayContext, provider: ProviderPlugin): Finished {
  return async (response: ResponseObject) => {
    const request = context.request.body as ResponsesRequest;
    // The response cache (a stateless request's miss) stores a completed response; a failed or filtered one never.
    const recorder = context.cache?.recorder;
    if (recorder && response.status === 'completed') {
      recorder.answer(response);
      await recorder.complete();
    }
    if (request.store === false) return;
    // A masked conversation is stored as the model saw it (placeholders; a stream's answer was
    // restored on its way out), with its mapping sealed, so the next turn sends the same placeholders.
    const restorer = context.guardrail?.restorer;
    const stored = restorer ? concealValue(response, restorer) : response;
    const mask = await sealedMask(options, context, response.id);
    try {
      await options.store.put({
        id: response.id,
        owner: state.owner,
        createdMs: Date.now(),
        provider: provider.id,
        previousId: request.previous_response_id ?? null,
        input: inputItems(request),
        response: stored,
        ...(mask ? { mask } : {}),
      });
    } catch (error) {
      options.onStoreError(error);
    }
  };
}

/** What this turn's masking carries to the next, sealed; undefined when nothing (or the vault failed: told, never with the mapping). */
async function sealedMask(options: ResponsesProtocolOptions, context: GatewayContext, id: string): Promise<SealedSecret | undefined> {
  const conversation = options.sealer && context.guardrail?.conversation?.();
  if (!conversation) return undefined;
  try {
    return await options.sealer!.seal(maskRecordId(id), JSON.stringify(conversation));
  } catch (error) {
    options.onMaskError?.(error);
    return undefined;
  }
}

/** What the turn `previous` carried for the input chain, opened; undefined when nothing (or it cannot be opened: told). */
async function carriedMask(options: ResponsesProtocolOptions, owner: string, previous: string): Promise<ConversationMask | undefined> {
  if (!options.sealer) return undefined;
  const record = await options.store.get(owner, previous);
  if (!record?.mask) return undefined;
  try {
    const opened = JSON.parse(await options.sealer.open(maskRecordId(record.id), record.mask)) as ConversationMask;
    return typeof opened?.policy === 'string' && Array.isArray(opened.steps) ? opened : undefined;
  } catch (error) {
    options.onMaskError?.(error);
    return undefined;
  }
}

/**
 * `POST /v1/responses` (the OpenAI Responses API) as an operation of the unified API: the same
 * pipeline as chat. Per attempt, a provider that declares the native `responses` operation gets
 * the request as it is (the conversation spelled out); any other provider with chat gets it
 * translated to chat, and its answer (plain or streamed) translated back. The state hook reads
 * the conversation of `previous_response_id` (scoped to the caller's key) before the attempts.
 */
export function createResponsesProtocol(options: ResponsesProtocolOptions): { handler: OperationHandler; hook: Hook } {
  // Kept per request (a routed attempt's view of the context reads its request's state).
  const states = new WeakMap<GatewayContext, ResponsesState>();
  const stateOf = (context: GatewayContext): ResponsesState => {
    let state = states.get(requestContextOf(context));
    if (!state) {
      const caller = context.auth?.caller;
      if (!caller) throw new Error('responses state before auth');
      state = { id: newId('resp'), createdAt: Math.floor(Date.now() / 1000), owner: ownerOf(caller) };
      states.set(requestContextOf(context), state);
    }
    return state;
  };

  const handler: OperationHandler = {
    name: 'responses',
    mapsErrors: true,
    judged(body) {
      const request = body as ResponsesRequest;
      const { texts, slots } = responsesTexts(request);
      return { texts, parameters: responsesParameters(request), rewrite: (rewritten, parameters) => rewriteResponsesRequest(request, slots, rewritten, parameters) };
    },

    carried(context) {
      const previous = (context.request.body as ResponsesRequest).previous_response_id;
      return typeof previous === 'string' ? carriedMask(options, stateOf(context).owner, previous) : Promise.resolve(undefined);
    },

    async parse(request, parseOptions) {
      const raw = await readBody(request, parseOptions.bodyLimitBytes, parseOptions);
      const rawText = raw.toString('utf8');
      const body = validateResponsesRequest(parseJsonObject(rawText));
      return { body, raw, rawText, model: body.model, streaming: body.stream === true };
    },

    // A request with `mcp` tools naming registered servers runs the gateway's tool loop, each model call a request of its own.
    async answerLocally(context, provider) {
      const request = context.request.body as ResponsesRequest;
      if (options.mcp === undefined || servedMcpTools(request).length === 0) return undefined;
      const state = stateOf(context);
      const history = (state.history ?? []).map((entry) => entry.item);
      return mcpToolLoop(options.mcp, context, request, { id: state.id, createdAt: state.createdAt, history, input: inputItems(request), finished: storeFinished(options, state, context, provider) });
    },

    toUpstream: (context, provider, target) => attemptUpstream(options, stateOf(context), context, provider, target),

    respond(context, provider, forward) {
      const state = stateOf(context);
      const attempt = state.attempt;
      if (!attempt) throw new Error('responses answer without an attempt');
      const finished = storeFinished(options, state, context, provider);
      return attempt.kind === 'native'
        ? respondWithProtocol(context, provider, forward, nativeResponseAnswer(context, provider, attempt, finished))
        : respondWithProtocol(context, provider, forward, translatedResponseAnswer(context, provider, { ...attempt, state }, finished));
    },

    cache: responsesCache,

    dropped(context) {
      const attempt = states.get(requestContextOf(context))?.attempt;
      return attempt?.kind === 'native' ? attempt.dropped : attempt?.translated.dropped;
    },
  };

  const hook: Hook = {
    name: 'responses-state',
    stage: 'transform',
    before: ['gateway-transform'],
    // Other operations pass straight on (no promise of this hook's own around next()).
    run(context, next) {
      return context.operation === 'responses' ? withHistory(context, next) : next();
    },
  };

  /** A Responses request: the stored conversation its `previous_response_id` names, then the rest. */
  async function withHistory(context: GatewayContext, next: Next): Promise<void> {
    const state = stateOf(context);
    const previous = (context.request.body as ResponsesRequest).previous_response_id;
    if (typeof previous === 'string') {
      const history = await conversationOf(options.store, state.owner, previous, true);
      if (!history) {
        throw errors.notFound(`Previous response with id '${previous}' not found.`, { param: 'previous_response_id', code: 'previous_response_not_found' });
      }
      state.history = history;
    }
    await next();
  }

  return { handler, hook };
}
