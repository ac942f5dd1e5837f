import { parseJsonObject, readBody } from '../../../http/body.js';
import type { GatewayContext } from '../../../pipeline/context.js';
import type { MessagesAdapter, ProviderPlugin } from '../../../spec/provider.js';
import type { MessagesCountRequest, MessagesRequest } from '../../../spec/messages.js';
import type { ChatRequest } from '../../../spec/unified.js';
import { respondWithJson } from '../../json-response.js';
import { type OperationHandler, unsupportedOperation } from '../../operation.js';
import { respondWithProtocol } from '../../protocol-respond.js';
import { messagesCache } from './cache.js';
import { estimateInputTokens } from './count-tokens.js';
import { renderMessagesError } from './errors.js';
import { nativeMessageAnswer, translatedMessageAnswer } from './respond.js';
import { validateCountRequest, validateMessagesRequest } from './schema.js';
import { messagesJudgedRequest } from './texts.js';
import { chatRequestOf } from './to-chat.js';

const ROUTE = 'POST /v1/messages';

/** The provider's native Messages adapter when it serves `model` natively; else the request is translated to chat. */
export function nativeMessages(provider: ProviderPlugin, model: string): MessagesAdapter | undefined {
  const adapter = provider.operations.messages;
  return adapter && (adapter.accepts?.(model) ?? true) ? adapter : undefined;
}

/** The current attempt's translation (absent when its provider is native): its chat request and the fields it dropped. */
const translations = new WeakMap<GatewayContext, { chat: ChatRequest; dropped: readonly string[] }>();

/**
 * `POST /v1/messages`: the Anthropic Messages API as a first-class operation, through the same
 * pipeline as chat. Per attempt, a provider that takes the protocol natively gets the request as
 * it is (Anthropic, Claude on Vertex AI and Bedrock); any other provider with chat gets it
 * translated (`to-chat.ts`), and its answer back as a Message or Messages events. Errors on this
 * route have the Messages API's shape.
 */
export const messages: OperationHandler = {
  name: 'messages',
  mapsErrors: true,
  renderError: renderMessagesError,
  judged: (body) => messagesJudgedRequest(body as MessagesRequest),

  async parse(request, options) {
    const raw = await readBody(request, options.bodyLimitBytes, options);
    const rawText = raw.toString('utf8');
    const body = validateMessagesRequest(parseJsonObject(rawText));
    return { body, raw, rawText, model: body.model, streaming: body.stream === true };
  },

  toUpstream(context, provider, target) {
    const request = context.request.body as MessagesRequest;
    const native = nativeMessages(provider, request.model);
    if (native && (!context.request.streaming || native.stream)) {
      translations.delete(context);
      native.validate?.(request);
      return native.toUpstream(request, target, context.request.raw);
    }
    const adapter = provider.operations.chat;
    if (!adapter || (context.request.streaming && !adapter.stream)) throw unsupportedOperation(provider.id, 'messages', ROUTE);
    const { request: chat, dropped } = chatRequestOf(request, provider.id, provider.capabilities?.chatExtensions?.(request.model) ?? []);
    adapter.validate?.(chat);
    translations.set(context, { chat, dropped });
    // The answer is re-encoded by the gateway, so the provider may add its extra fields (thinking blocks).
    return adapter.toUpstream(chat, { ...target, strict: false });
  },

  dropped: (context) => translations.get(context)?.dropped,

  respond(context, provider, forward) {
    const translation = translations.get(context);
    if (translation) return respondWithProtocol(context, provider, forward, translatedMessageAnswer(context, provider, translation.chat));
    const native = nativeMessages(provider, (context.request.body as MessagesRequest).model);
    if (!native) throw new Error('messages response without a native adapter or a translation');
    return respondWithProtocol(context, provider, forward, nativeMessageAnswer(context, native));
  },

  cache: messagesCache,
};

/** The provider's native token counter for `model`, if it has one. */
const nativeCounter = (provider: ProviderPlugin, model: string) => nativeMessages(provider, model)?.countTokens;

/**
 * `POST /v1/messages/count_tokens`: counted by the provider where it can (Anthropic), estimated by
 * the gateway elsewhere (`count-tokens.ts`), without calling the provider.
 */
export const messagesCountTokens: OperationHandler = {
  name: 'messagesCountTokens',
  mapsErrors: true,
  renderError: renderMessagesError,
  judged: (body) => messagesJudgedRequest(body as MessagesRequest),

  async parse(request, options) {
    const raw = await readBody(request, options.bodyLimitBytes, options);
    const rawText = raw.toString('utf8');
    const body = validateCountRequest(parseJsonObject(rawText));
    return { body, raw, rawText, model: body.model, streaming: false };
  },

  async answerLocally(context, provider) {
    const request = context.request.body as MessagesCountRequest;
    if (nativeCounter(provider, request.model)) return undefined;
    if (!provider.operations.chat) throw unsupportedOperation(provider.id, 'messagesCountTokens', 'POST /v1/messages/count_tokens');
    return { status: 200, headers: {}, body: { json: { input_tokens: await estimateInputTokens(request) } } };
  },

  toUpstream(context, provider, target) {
    const request = context.request.body as MessagesCountRequest;
    const counter = nativeCounter(provider, request.model);
    // Only a routed attempt past the first target can get here without a counter.
    if (!counter) throw unsupportedOperation(provider.id, 'messagesCountTokens', 'POST /v1/messages/count_tokens');
    return counter.toUpstream(request, target, context.request.raw);
  },

  respond: (context, provider, forward) =>
    respondWithJson(context, provider, forward, {
      map(body, target, headers) {
        const request = context.request.body as MessagesCountRequest;
        const counter = nativeCounter(provider, request.model);
        if (!counter) throw unsupportedOperation(provider.id, 'messagesCountTokens', 'POST /v1/messages/count_tokens');
        return counter.fromUpstream(body, request, target, headers);
      },
      strict: (count) => count,
      record: () => {},
    }),
};
