import type { IncomingMessage } from 'node:http';
import { errors, type GatewayError } from '../../../errors.js';
import { parseJsonObject, readBody } from '../../../http/body.js';
import { canonicalPath, rawPathOf } from '../../../http/request-path.js';
import type { GatewayContext, GatewayResponse } from '../../../pipeline/context.js';
import type { GeminiRequest, GeminiTokenCount } from '../../../spec/gemini.js';
import { isRecord } from '../../../spec/is-record.js';
import type { GenerateContentAdapter, ProviderPlugin } from '../../../spec/provider.js';
import type { ChatRequest, EmbeddingRequest, EmbeddingResponse, ModelList } from '../../../spec/unified.js';
import { respondWithJson } from '../../json-response.js';
import { type OperationHandler, unsupportedOperation } from '../../operation.js';
import { respondWithProtocol, SSE_HEADERS } from '../../protocol-respond.js';
import { geminiCache } from './cache.js';
import { estimateGeminiTokens } from './count-tokens.js';
import { renderGoogleError } from './errors.js';
import { blockedPrompt } from './from-chat.js';
import { nativeGeminiAnswer, streamHeaders, translatedGeminiAnswer } from './respond.js';
import { type GeminiEmbedRequest, type GeminiMethod, geminiModelPath, validateCountTokens, validateEmbed, validateGenerateContent } from './schema.js';
import { responseAsStream } from './stream-encoder.js';
import { geminiJudgedRequest } from './texts.js';
import { chatRequestOf, geminiRefusal } from './to-chat.js';

/** The provider's native Gemini adapter when it serves `model` natively; else the request is translated to chat. */
export function nativeGemini(provider: ProviderPlugin, model: string): GenerateContentAdapter | undefined {
  const adapter = provider.operations.generateContent;
  return adapter && (adapter.accepts?.(model) ?? true) ? adapter : undefined;
}

/** The model and method of a request on a Gemini route, from its path (the router matched it already). */
function routeOf(request: IncomingMessage): { model: string; method: GeminiMethod } {
  const found = geminiModelPath(canonicalPath(rawPathOf(request.url)));
  if (!found) throw errors.notFound('No such Gemini API method.', { code: 'route_not_found' });
  return found;
}

/** Whether the request asked for server-sent events (`alt=sse`); else a stream is one JSON array. */
const asksForSse = (request: IncomingMessage): boolean => new URLSearchParams(request.url?.split('?')[1] ?? '').get('alt') === 'sse';

async function readJson(request: IncomingMessage, options: Parameters<OperationHandler['parse']>[1]) {
  const raw = await readBody(request, options.bodyLimitBytes, options);
  const rawText = raw.toString('utf8');
  return { raw, rawText, json: parseJsonObject(rawText) };
}

/**
 * The Gemini API's answer to an input guardrail's denial: Google reports a blocked prompt with a
 * 200, no candidate and `promptFeedback.blockReason` (as a stream of that one piece when streamed).
 * Every other error is Google's error object.
 */
function blockedPromptResponse(error: GatewayError, context: GatewayContext): GatewayResponse | undefined {
  if (error.body.code !== 'guardrail_denied' || !isRecord(context.request.body)) return undefined;
  const request = context.request.body as GeminiRequest;
  const blocked = blockedPrompt(request.model);
  if (!context.request.streaming) return { status: 200, headers: {}, body: { json: blocked } };
  return { status: 200, headers: { ...SSE_HEADERS, ...streamHeaders(request) }, body: { bytes: Buffer.from(responseAsStream(blocked, request.stream === 'sse')) } };
}

const ROUTE = 'POST /v1beta/models/{model}:generateContent';

/** The current attempt's translation (absent when its provider is native): its chat request and the fields it dropped. */
const translations = new WeakMap<GatewayContext, { chat: ChatRequest; dropped: readonly string[] }>();

/**
 * `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent` (with `alt=sse`, or a
 * JSON array): the Gemini API as a first-class operation, through the same pipeline as chat. Per
 * attempt, a provider that takes the API natively gets the request as written; any other provider
 * with chat gets it translated (`to-chat.ts`), and its answer back as Gemini's responses. Errors on
 * these routes have Google's shape.
 */
export const generateContent: OperationHandler = {
  name: 'generateContent',
  mapsErrors: true,
  renderError: renderGoogleError,
  errorResponse: blockedPromptResponse,
  judged: (body) => geminiJudgedRequest(body as GeminiRequest),

  async parse(request, options) {
    const { model, method } = routeOf(request);
    const { raw, rawText, json } = await readJson(request, options);
    const streaming = method === 'streamGenerateContent';
    const body = validateGenerateContent(json, model);
    if (streaming) body.stream = asksForSse(request) ? 'sse' : 'array';
    return { body, raw, rawText, model, streaming };
  },

  toUpstream(context, provider, target) {
    const request = context.request.body as GeminiRequest;
    const native = nativeGemini(provider, request.model);
    if (native && (!context.request.streaming || native.stream)) {
      translations.delete(context);
      native.validate?.(request);
      return native.toUpstream(request, target);
    }
    const adapter = provider.operations.chat;
    if (!adapter || (context.request.streaming && !adapter.stream)) throw unsupportedOperation(provider.id, 'generateContent', ROUTE);
    const capabilities = provider.capabilities;
    const { request: chat, dropped } = chatRequestOf(request, provider.id, capabilities?.chatExtensions?.(request.model) ?? [], capabilities?.contentParts?.(request.model) ?? {});
    try {
      adapter.validate?.(chat);
    } catch (error) {
      throw geminiRefusal(error, provider.id, request);
    }
    translations.set(context, { chat, dropped });
    // The answer is re-encoded by the gateway, so the provider may add its extra fields (thinking blocks).
    return adapter.toUpstream(chat, { ...target, strict: false });
  },

  dropped: (context) => translations.get(context)?.dropped,

  respond(context, provider, forward) {
    const translation = translations.get(context);
    if (translation) return respondWithProtocol(context, provider, forward, translatedGeminiAnswer(context, provider, translation.chat));
    const native = nativeGemini(provider, (context.request.body as GeminiRequest).model);
    if (!native) throw new Error('generateContent response without a native adapter or a translation');
    return respondWithProtocol(context, provider, forward, nativeGeminiAnswer(context, native));
  },

  cache: geminiCache,
};

/** The provider's native token counter for `model`, if it has one. */
const nativeCounter = (provider: ProviderPlugin, model: string) => nativeGemini(provider, model)?.countTokens;

/**
 * `POST /v1beta/models/{model}:countTokens`: counted by the provider where it takes the API natively,
 * estimated by the gateway elsewhere (`count-tokens.ts`), without calling the provider.
 */
export const geminiCountTokens: OperationHandler = {
  name: 'geminiCountTokens',
  mapsErrors: true,
  renderError: renderGoogleError,
  judged: (body) => geminiJudgedRequest(body as GeminiRequest),

  async parse(request, options) {
    const { model } = routeOf(request);
    const { raw, rawText, json } = await readJson(request, options);
    return { body: validateCountTokens(json, model), raw, rawText, model, streaming: false };
  },

  async answerLocally(context, provider) {
    const request = context.request.body as GeminiRequest;
    if (nativeCounter(provider, request.model)) return undefined;
    if (!provider.operations.chat) throw unsupportedOperation(provider.id, 'geminiCountTokens', 'POST /v1beta/models/{model}:countTokens');
    return { status: 200, headers: {}, body: { json: { totalTokens: await estimateGeminiTokens(request) } } };
  },

  toUpstream(context, provider, target) {
    const request = context.request.body as GeminiRequest;
    const counter = nativeCounter(provider, request.model);
    // Only a routed attempt past the first target can get here without a counter.
    if (!counter) throw unsupportedOperation(provider.id, 'geminiCountTokens', 'POST /v1beta/models/{model}:countTokens');
    return counter.toUpstream(request, target);
  },

  respond: (context, provider, forward) =>
    respondWithJson<GeminiTokenCount>(context, provider, forward, {
      map(body, target, headers) {
        const request = context.request.body as GeminiRequest;
        const counter = nativeCounter(provider, request.model);
        if (!counter) throw unsupportedOperation(provider.id, 'geminiCountTokens', 'POST /v1beta/models/{model}:countTokens');
        return counter.fromUpstream(body, request, target, headers);
      },
      strict: (count) => count,
      record: () => {},
    }),
};

/** `:embedContent` / `:batchEmbedContents` as the gateway holds them: the path's model, the requests, which of the two. */
interface GeminiEmbedBody {
  model: string;
  requests: GeminiEmbedRequest[];
  batch: boolean;
}

/** The usage the provider reported for an answer in Google's shape (which has no place for it), for the log. */
const embedUsage = new WeakMap<object, { prompt_tokens: number; total_tokens: number }>();

/** Embedding request fields with no place in the embeddings operation, dropped and recorded per attempt. */
const embedDrops = new WeakMap<GatewayContext, readonly string[]>();

/** The texts of an embed request's content (text parts only: an embeddings API takes text). */
function embedText(request: GeminiEmbedRequest, param: string, provider: string): string {
  const texts: string[] = [];
  request.content.parts.forEach((part, index) => {
    if (typeof part.text === 'string') texts.push(part.text);
    else throw errors.invalidRequest(`The provider "${provider}" embeds text only (${param}.content.parts[${index}]).`, { param: `${param}.content.parts[${index}]`, code: 'unsupported_content' });
  });
  return texts.join('\n');
}

/** The embeddings operation's request for an embed body (one input per request). */
function embeddingRequestOf(body: GeminiEmbedBody, provider: string): { request: EmbeddingRequest; dropped: string[] } {
  const dropped = new Set<string>();
  const dimensions = new Set(body.requests.map((request) => request.outputDimensionality));
  if (dimensions.size > 1) throw errors.invalidRequest(`The provider "${provider}" takes one outputDimensionality for a whole batch.`, { param: 'requests', code: 'invalid_value' });
  const input = body.requests.map((request, index) => {
    for (const field of ['taskType', 'title']) if (request[field] !== undefined) dropped.add(field);
    return embedText(request, body.batch ? `requests[${index}]` : 'content', provider);
  });
  const [dimension] = dimensions;
  const request: EmbeddingRequest = { model: body.model, input, ...(dimension === undefined ? {} : { dimensions: dimension }) };
  return { request, dropped: [...dropped] };
}

/**
 * `POST /v1beta/models/{model}:embedContent` and `:batchEmbedContents`: translated to the embeddings
 * operation of the provider (Google's own too, whose embeddings adapter speaks batchEmbedContents),
 * answered in Google's shape; a 400 naming the provider when it has no embeddings.
 */
export const geminiEmbed: OperationHandler = {
  name: 'geminiEmbed',
  mapsErrors: true,
  renderError: renderGoogleError,

  async parse(request, options) {
    const { model, method } = routeOf(request);
    const { raw, rawText, json } = await readJson(request, options);
    return { body: validateEmbed(json, model, method === 'batchEmbedContents'), raw, rawText, model, streaming: false };
  },

  toUpstream(context, provider, target) {
    const adapter = provider.operations.embed;
    const body = context.request.body as GeminiEmbedBody;
    if (!adapter) throw unsupportedOperation(provider.id, 'geminiEmbed', `POST /v1beta/models/{model}:${body.batch ? 'batchEmbedContents' : 'embedContent'}`);
    const { request, dropped } = embeddingRequestOf(body, provider.id);
    adapter.validate?.(request);
    embedDrops.set(context, dropped);
    return adapter.toUpstream(request, target);
  },

  dropped: (context) => embedDrops.get(context),

  respond: (context, provider, forward) =>
    respondWithJson<unknown>(context, provider, forward, {
      map(body, target, headers) {
        const adapter = provider.operations.embed;
        if (!adapter) throw unsupportedOperation(provider.id, 'geminiEmbed', 'POST /v1beta/models/{model}:embedContent');
        const embedBody = context.request.body as GeminiEmbedBody;
        const response: EmbeddingResponse = adapter.fromUpstream(body, embeddingRequestOf(embedBody, provider.id).request, target, headers);
        const vectors = response.data.map((entry) => ({ values: Array.isArray(entry.embedding) ? entry.embedding : Array.from(new Float32Array(Buffer.from(String(entry.embedding), 'base64').buffer)) }));
        const answer = embedBody.batch ? { embeddings: vectors } : { embedding: vectors[0] };
        if (response.usage) embedUsage.set(answer, response.usage);
        return answer;
      },
      strict: (response) => response,
      record(response, transform) {
        const usage = embedUsage.get(response as object);
        if (usage) transform.usage = { prompt_tokens: usage.prompt_tokens, completion_tokens: 0, total_tokens: usage.total_tokens };
      },
    }),
};

/** `GET /v1beta/models`: the provider's list in Google's shape (`models/{id}` names, the methods the gateway serves on them). */
export const geminiModels: OperationHandler = {
  name: 'geminiModels',
  method: 'GET',
  mapsErrors: true,
  renderError: renderGoogleError,

  async parse() {
    return { streaming: false };
  },

  toUpstream(_context, provider, target) {
    const adapter = provider.operations.models;
    if (!adapter) throw unsupportedOperation(provider.id, 'geminiModels', 'GET /v1beta/models');
    return adapter.toUpstream(target);
  },

  respond: (context, provider, forward) =>
    respondWithJson<unknown>(context, provider, forward, {
      map(body, target) {
        const adapter = provider.operations.models;
        if (!adapter) throw unsupportedOperation(provider.id, 'geminiModels', 'GET /v1beta/models');
        const list: ModelList = adapter.fromUpstream(body, target);
        const allowed = context.key?.allowedModels;
        const ids = allowed ?? (list.data ?? []).map((model) => model.id);
        const methods = ['generateContent', 'streamGenerateContent', 'countTokens', ...(provider.operations.embed ? ['embedContent', 'batchEmbedContents'] : [])];
        const listed = new Map((list.data ?? []).map((model) => [model.id, model]));
        return {
          models: ids.map((id) => {
            const name = id.replace(/^models\//, '');
            const display = listed.get(id)?.display_name;
            return { name: `models/${name}`, displayName: typeof display === 'string' ? display : name, supportedGenerationMethods: methods };
          }),
        };
      },
      strict: (response) => response,
      record: () => {},
    }),
};
