import type { Readable } from 'node:stream';
import type { ContentPartSupport } from './content-parts.js';
import type { PluginManifest, PluginRegistration } from './manifest.js';
import type {
  ChatCompletionChunk,
  ChatRequest,
  ChatResponse,
  CompletionRequest,
  CompletionResponse,
  EmbeddingRequest,
  EmbeddingResponse,
  ErrorBody,
  ImageGenerateRequest,
  ImageResponse,
  ModelList,
  MultipartForm,
  RerankRequest,
  RerankResponse,
  SpeechRequest,
} from './unified.js';
import type { GeminiRequest, GeminiResponse, GeminiTokenCount } from './gemini.js';
import type { MessagesCountRequest, MessagesRequest, MessagesResponse, MessagesStreamEvent, MessagesTokenCount } from './messages.js';
import type { ResponseEvent, ResponseObject, ResponsesRequest } from './responses.js';
import type { BatchAdapter } from './batches.js';
import type { CredentialExchange } from './credential-exchange.js';

/**
 * The provider-plugin contract. A provider is a folder under `plugins/providers/<id>/` whose
 * `index.ts` exports a factory returning a {@link ProviderRegistration}. Everything a provider needs
 * (URL templates from headers, its auth format, its stream framing, its error shape) is expressed
 * here, so the core never names a provider.
 *
 * Refusing a request: a contract method that cannot go on throws a `GatewayError` built from the
 * toolkit's `errors` catalogue (`throw errors.invalidRequest(message, { param, code })` for a
 * request the provider cannot take). The methods that may throw are `validate`, `toUpstream` and
 * `fromUpstream` of an operation, `createMapper` of a stream, and the plugin's `baseUrl`,
 * `passthroughUrl` and `auth`. A thrown `GatewayError` is the client's answer as it is (status,
 * type, code, param, message); anything else thrown becomes a 500 `internal_error` that reveals
 * nothing internal, except in `fromUpstream`, where it is the provider's fault: a 502
 * `upstream_invalid_response`. Nothing is sent upstream before `validate`, `toUpstream`, `baseUrl`
 * and `auth` have returned. `mapError` and stream mappers never throw for an upstream's error: they
 * describe it as an `ErrorBody`.
 */

/**
 * The version of this contract. A provider declares the version it was written against in its
 * manifest; the registry refuses at boot one whose version it does not support, so a plugin built
 * for another contract fails on start, not on its first request.
 */
export const SPECIFICATION_VERSION = 'v1';

/** A version of the provider contract the registry supports. */
export type SpecificationVersion = typeof SPECIFICATION_VERSION;

/** The credential the caller supplied (Bearer token), or the one the vault decrypted for a virtual key. */
export interface ProviderCredentials {
  /** The `Authorization: Bearer <token>` value, without the `Bearer ` prefix. */
  readonly apiKey?: string;
  /**
   * A structured credential stored in the vault (for example a cloud's access key id, secret and
   * session token), by field name; plugins read the names they define. Fields named like a gateway
   * header (`x-gateway-…`, e.g. the cloud-specific ones) also supply that header's value in
   * `target.headers`, so a virtual key replaces the cloud headers a caller would otherwise send.
   */
  readonly fields?: Readonly<Record<string, string>>;
  /** The token the provider's {@link CredentialExchange} gave for this credential, set by the core before `auth()`. */
  readonly exchangedToken?: string;
}

/** Where and how one request is sent: resolved by the auth stage before the provider maps anything. */
export interface ProviderTarget {
  /** The base URL: the `x-gateway-custom-host` value when given, else the provider's own. No trailing slash. */
  readonly baseUrl: string;
  /** True when `baseUrl` came from `x-gateway-custom-host`. */
  readonly customHost: boolean;
  /**
   * The client's request headers, lower-cased. Plugins read their own (for example cloud-specific
   * `x-gateway-cloud-*` headers); the core does not interpret them.
   */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly credentials: ProviderCredentials;
  /** `x-gateway-strict-api-compliance` (default true): when false, providers may add their extra fields. */
  readonly strict: boolean;
}

/** A request to send upstream: pure data, built by a provider's `toUpstream`. */
export interface UpstreamRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Absolute URL (`target.baseUrl` + the operation's path). */
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body?: string | Uint8Array | Readable | null;
}

/** An upstream answer handed to a mapper: status, lower-cased headers and the body bytes. */
export interface UpstreamReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Uint8Array;
}

/**
 * One event of an upstream stream, as produced by a {@link StreamDecoder}: for SSE the `data` field
 * (and `event` name); for binary framings whatever the plugin's decoder yields.
 */
export interface UpstreamEvent {
  readonly event?: string;
  readonly data: string;
}

/**
 * Turns upstream stream bytes into events, incrementally (a frame may be split across reads).
 * The default is server-sent events; a provider with another framing supplies its own.
 */
export interface StreamDecoder {
  /** Consumes one read of bytes; returns the events completed by it. */
  push(bytes: Uint8Array): UpstreamEvent[];
  /** The upstream body ended: returns any last complete event. */
  end(): UpstreamEvent[];
}

/** What a stream mapper makes of one upstream event. */
export interface StreamStep<Chunk = ChatCompletionChunk> {
  /** Unified chunks to emit, in order (may be empty). */
  readonly chunks?: Chunk[];
  /** The upstream's normal end of stream (for OpenAI: `data: [DONE]`). */
  readonly done?: boolean;
  /** The upstream reported an error inside the stream; the gateway ends the client's stream with it. */
  readonly error?: ErrorBody;
}

/** Maps a provider's stream events to unified chunks; one instance per request (it may keep state). */
export interface StreamMapper<Chunk> {
  map(event: UpstreamEvent): StreamStep<Chunk>;
}

export type ChatStreamMapper = StreamMapper<ChatCompletionChunk>;

/**
 * One operation of a provider, as a pair of pure functions: no I/O, values in, values out, so each
 * is tested against recorded fixtures without HTTP.
 */
export interface OperationAdapter<Request, Response> {
  /**
   * `original` is the client's body exactly as received. An adapter whose request needs no change
   * (an OpenAI-compatible identity) should send these bytes instead of re-serialising `request`:
   * it saves work on the hot path and keeps numbers JavaScript cannot hold exactly (64-bit seeds).
   */
  toUpstream(request: Request, target: ProviderTarget, original?: Uint8Array): UpstreamRequest;
  /**
   * `headers` are the upstream answer's (lower-cased), for providers that report something there
   * rather than in the body (Bedrock's token counts on InvokeModel).
   */
  fromUpstream(body: unknown, request: Request, target: ProviderTarget, headers?: UpstreamReply['headers']): Response;
  /**
   * Checks of the provider's own beyond the unified bounds (e.g. its image models' sizes), run
   * after the unified validation and before `toUpstream`. Refuses by throwing
   * `errors.invalidRequest(message, { param, code })`; returns nothing.
   */
  validate?(request: Request): undefined;
}

/** An operation that may stream its answer as chunks. */
export interface StreamingAdapter<Request, Response, Chunk> extends OperationAdapter<Request, Response> {
  /** Present when the provider streams this operation. */
  readonly stream?: {
    /** Framing of the upstream stream; server-sent events when absent. */
    createDecoder?(): StreamDecoder;
    createMapper(request: Request, target: ProviderTarget): StreamMapper<Chunk>;
    /**
     * For a provider whose streamed request answers JSON naming where the stream is (a job created
     * with streaming asked for): the request that opens the stream, from that first answer. The
     * core sends it with `auth()`, the attempt's egress policy, time-out and abort, and reads it
     * with the decoder and mapper above. Throws when the answer names no stream (a `GatewayError`
     * as it is, anything else a 502 `upstream_invalid_response`); an error status of the second
     * answer is mapped by `mapError`. Undefined: the first answer is the whole answer (mapped by
     * `fromUpstream` and sent as a stream), for a request the provider answers without a stream.
     */
    follow?(firstAnswer: unknown, request: Request, target: ProviderTarget): UpstreamRequest | undefined;
  };
}

/** The chat operation, with its streaming side. */
export type ChatAdapter = StreamingAdapter<ChatRequest, ChatResponse, ChatCompletionChunk>;

/** Text completions; streamed chunks share the plain response's shape (`object: text_completion`). */
export type CompletionAdapter = StreamingAdapter<CompletionRequest, CompletionResponse, CompletionResponse>;

export type EmbedAdapter = OperationAdapter<EmbeddingRequest, EmbeddingResponse>;

export type ImageGenerateAdapter = OperationAdapter<ImageGenerateRequest, ImageResponse>;

/**
 * Rerank (`POST /v1/rerank`): the provider's own rerank API. `fromUpstream` maps its results as they
 * come (any order, any count); the core puts them best first, keeps `top_n` and adds the documents
 * from the request when `return_documents` is true, so a provider that never echoes documents
 * (Cohere v2, Bedrock) answers the same as one that does.
 */
export type RerankAdapter = OperationAdapter<RerankRequest, RerankResponse>;

/**
 * An operation whose request is multipart/form-data. The core has already streamed the form in,
 * size-limited, with files spooled to temporary files (see `core/http/multipart.ts`, whose
 * `encodeMultipart` re-encodes a form with the files byte for byte).
 */
export interface MultipartAdapter<Response> {
  toUpstream(form: MultipartForm, target: ProviderTarget): UpstreamRequest;
  /** Maps a JSON answer. When absent, the upstream answer is relayed as received (status, type, bytes). */
  fromUpstream?(body: unknown, form: MultipartForm, target: ProviderTarget): Response;
  /** The form's own checks; refuses by throwing, like {@link OperationAdapter.validate}. */
  validate?(form: MultipartForm): undefined;
}

/** Text to speech: the upstream answers with audio bytes, which the core streams to the client as they arrive. */
export interface SpeechAdapter {
  /** `original`: the client's body as received (see {@link OperationAdapter.toUpstream}). */
  toUpstream(request: SpeechRequest, target: ProviderTarget, original?: Uint8Array): UpstreamRequest;
  /** Speech models of this provider accepted besides `tts-1` and `tts-1-hd`. */
  readonly models?: readonly string[];
  /**
   * Voices of this provider accepted besides the six the spec names, or `'*'` when its voices are
   * ids of the account's own (cloned, designed) voices that no list can name: the provider judges them.
   */
  readonly voices?: readonly string[] | '*';
}

/**
 * The Anthropic Messages API taken natively (`POST /v1/messages`), so a request goes upstream with
 * no round trip through the chat shape and its answer comes back as the provider sent it (thinking
 * signatures, citations and cache usage intact). A provider without it still serves the protocol:
 * the core translates Messages to and from its `chat` operation. The stream mapper yields the
 * protocol's own events (`message_start`, `content_block_delta`, …), decoded from the provider's
 * framing.
 */
export interface MessagesAdapter extends StreamingAdapter<MessagesRequest, MessagesResponse, MessagesStreamEvent> {
  /**
   * Whether `model` is served natively (a cloud that hosts Claude beside other models); absent:
   * every model. For a model it does not accept, the core translates through `chat`.
   */
  accepts?(model: string): boolean;
  /** `POST /v1/messages/count_tokens`, natively; absent: the core estimates the count. */
  readonly countTokens?: OperationAdapter<MessagesCountRequest, MessagesTokenCount>;
}

/**
 * The Gemini API taken natively (`POST /v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent`), so a request goes upstream as the client wrote it (thought signatures,
 * safety settings, Google's built-in tools intact) and its answer comes back as the provider sent it.
 * A provider without it still serves the protocol: the core translates it to and from its `chat`
 * operation. The request's `model` is the path's (without `models/`); `toUpstream` builds the URL
 * and leaves `model` out of the body. A stream is asked for with `alt=sse`; its mapper yields each
 * `GenerateContentResponse` piece.
 */
export interface GenerateContentAdapter extends StreamingAdapter<GeminiRequest, GeminiResponse, GeminiResponse> {
  /** Whether `model` is served natively (a cloud that hosts other models too); absent: every model. */
  accepts?(model: string): boolean;
  /** `:countTokens`, natively; absent: the core estimates the count. */
  readonly countTokens?: OperationAdapter<GeminiRequest, GeminiTokenCount>;
}

/** `GET /v1/models`: the provider's list, mapped to the OpenAI list shape. */
export interface ModelsAdapter {
  toUpstream(target: ProviderTarget): UpstreamRequest;
  fromUpstream(body: unknown, target: ProviderTarget): ModelList;
}

/**
 * The OpenAI Responses API spoken natively (`POST /v1/responses` upstream, no translation). A
 * provider without it still serves Responses requests: the core translates them to its chat
 * operation and back. The request handed to `toUpstream` is the client's, validated, with the
 * conversation of `previous_response_id` already spelled out in `input` (the gateway keeps the
 * state) and the built-in tools the provider does not run removed. Stream events are the
 * documented Responses events; the core renumbers them and judges their text.
 */
export interface ResponsesAdapter extends StreamingAdapter<ResponsesRequest, ResponseObject, ResponseEvent> {
  /** Built-in tool types (`web_search`, `file_search`, …) the provider runs itself; the others are dropped or refused. */
  readonly builtInTools: readonly string[];
}

/** A Realtime session's request, as the client opened it (`GET /v1/realtime?model=…`). */
export interface RealtimeRequest {
  /** The `model` query parameter (an Azure deployment name on Azure). */
  readonly model: string;
}

/**
 * The Realtime API over WebSocket (`GET /v1/realtime?model=…`). The core accepts the client's
 * WebSocket once the session is admitted (key, limits, guardrail policy), opens one to the URL
 * `toUpstream` gives (an `https://` URL is dialled as `wss://`, `http://` as `ws://`; the method is
 * ignored) with its headers plus `auth()`'s, and relays the Realtime events both ways, reading
 * `response.done` for usage. The plugin says only where its endpoint is and what its handshake
 * needs (an API version, `OpenAI-Beta: realtime=v1` when the client asked for the beta interface).
 */
export interface RealtimeAdapter {
  toUpstream(request: RealtimeRequest, target: ProviderTarget): UpstreamRequest;
}

/**
 * The operations a provider offers, each an optional capability. An absent one is answered with a
 * 400 naming the provider and the operation.
 */
export interface ProviderOperations {
  readonly chat?: ChatAdapter;
  readonly completion?: CompletionAdapter;
  readonly embed?: EmbedAdapter;
  /** Rerank (`POST /v1/rerank`, Cohere's shape); see {@link RerankAdapter}. */
  readonly rerank?: RerankAdapter;
  readonly imageGenerate?: ImageGenerateAdapter;
  readonly imageEdit?: MultipartAdapter<ImageResponse>;
  readonly imageVariation?: MultipartAdapter<ImageResponse>;
  readonly speech?: SpeechAdapter;
  /** Audio transcription (`/v1/audio/transcriptions`); answers may be JSON or text, relayed as received when no mapper. */
  readonly transcription?: MultipartAdapter<unknown>;
  /** Audio translation (`/v1/audio/translations`). */
  readonly translation?: MultipartAdapter<unknown>;
  readonly models?: ModelsAdapter;
  /** The Anthropic Messages API, natively (see {@link MessagesAdapter}). */
  readonly messages?: MessagesAdapter;
  /** The Responses API, natively; absent: Responses requests are translated to `chat`. */
  readonly responses?: ResponsesAdapter;
  /** The Gemini API, natively (see {@link GenerateContentAdapter}); absent: translated to `chat`. */
  readonly generateContent?: GenerateContentAdapter;
  /**
   * The provider's own batch API, behind OpenAI's `/v1/files` and `/v1/batches` (see
   * {@link BatchAdapter}); absent: those paths are passed through (a provider that speaks OpenAI's).
   */
  readonly batches?: BatchAdapter;
  /** The Realtime API over WebSocket (see {@link RealtimeAdapter}); absent: a session is refused before the upgrade. */
  readonly realtime?: RealtimeAdapter;
}

/** What the core needs to know of a provider's behaviour beyond its operations. */
export interface ProviderCapabilities {
  /**
   * Whether the `developer` chat role is understood for `model`. When false, the core sends
   * `developer` messages as `system`. Default: true.
   */
  developerRole?(model: string): boolean;
  /**
   * The chat content parts beyond `text` and `image_url` (`file`, `input_audio`) the provider takes
   * for `model`. The core refuses any other such part before the provider maps the request (400
   * `unsupported_content_part` naming provider and part), so a mapper only meets parts it declared.
   * Default: none (a plugin written before these parts existed never receives them).
   */
  contentParts?(model: string): ContentPartSupport;
  /**
   * The unified chat fields beyond OpenAI's schema that the chat adapter reads for `model`
   * (`thinking`, `top_k`). A protocol translated to chat (Messages) sends such a field only to a
   * provider that names it here, and otherwise drops it and records the drop in the log: an
   * OpenAI-style API refuses fields it does not know. Default: none.
   */
  chatExtensions?(model: string): readonly ChatExtension[];
}

/** A unified chat field beyond OpenAI's schema (see {@link ProviderCapabilities.chatExtensions}). */
export type ChatExtension = 'thinking' | 'top_k';

/** A created provider plugin. */
export interface ProviderPlugin {
  /** The `x-gateway-provider` slug; equals the manifest id. */
  readonly id: string;
  /** Display name. */
  readonly name: string;
  readonly operations: ProviderOperations;
  readonly capabilities?: ProviderCapabilities;
  /**
   * The provider's own base URL for a request, from its headers (some clouds build it from
   * resource names). Used when no custom host is given. No trailing slash.
   */
  baseUrl(headers: Readonly<Record<string, string | undefined>>): string;
  /**
   * Headers that carry the credentials in the provider's own format, computed on the final
   * upstream request (so a plugin may sign method, URL and body).
   */
  auth(request: UpstreamRequest, target: ProviderTarget): Record<string, string>;
  /** A credential exchanged for a token before use (see {@link CredentialExchange}); absent: none is. */
  readonly credentialExchange?: CredentialExchange;
  /**
   * The request headers this provider reads as credentials (lower-case): every header `auth()` may
   * set to carry or sign a credential, and any other the provider accepts one in. An entry ending in
   * `*` names a prefix (`x-amz-*`). When a stored credential (a virtual key) is in use, naming one of
   * them in `x-gateway-forward-headers` is refused, so a caller cannot replace or shadow the vault's
   * credential; `authorization` is always treated as one.
   */
  readonly authHeaders: readonly string[];
  /** Maps an upstream error reply to the gateway's error body (status is kept by the core). */
  mapError(reply: UpstreamReply): ErrorBody;
  /**
   * URL for a pass-through request of `pathAndQuery` (the part after `/v1`). Defaults to
   * `target.baseUrl + pathAndQuery`.
   */
  passthroughUrl?(pathAndQuery: string, target: ProviderTarget): string;
  /**
   * Where the gateway finds this provider's token prices (for virtual keys with a budget). Absent:
   * the provider's models are priced only by the configuration's `pricing`.
   */
  readonly pricing?: ProviderPricing;
  /**
   * Where the shipped model catalogue (context windows, capabilities: `GET /v1/models`) lists this
   * provider's models. Absent: under the plugin's id.
   */
  readonly modelCatalogue?: ProviderModelCatalogue;
}

/** A provider's place in the shipped model catalogue, declared by the plugin so that the core names no provider. */
export interface ProviderModelCatalogue {
  /** The catalogue's id for the provider (e.g. the vendor whose models a compatible API serves). */
  readonly catalogProvider: string;
}

/**
 * How a provider's requests are priced from the shipped price catalogue. Declared by the plugin so
 * that the core, which prices requests, never has to know how a provider names its models.
 */
export interface ProviderPricing {
  /** The catalogue's id for the provider whose prices apply (e.g. the upstream vendor a compatible API resells). */
  readonly catalogProvider: string;
  /**
   * The catalogue's name for the model a request uses, when the provider names models its own way
   * (a cloud's deployment names, regional prefixes, version suffixes). Receives the request's model
   * and its headers (lower-case names). Default: the model as sent.
   */
  modelName?(model: string, headers: Readonly<Record<string, string | undefined>>): string;
  /**
   * The provider's published discount on batch requests, as a fraction of the price (0.5: half
   * price), applied when a translated batch is charged; a model's `batchDiscount` in the
   * configuration's `pricing.models` wins. Absent: batches are charged the full price.
   */
  readonly batchDiscount?: number;
}

/** A provider's manifest: the common one plus the contract version it was written against. */
export interface ProviderManifest extends PluginManifest {
  readonly kind: 'provider';
  /** The provider contract it implements: {@link SPECIFICATION_VERSION}. */
  readonly specificationVersion: SpecificationVersion;
}

/** What a provider's factory returns. */
export type ProviderRegistration = PluginRegistration<'provider', ProviderPlugin> & {
  readonly manifest: ProviderManifest;
  /** How other gateways' configurations name this provider (`llm-gateway import`); absent: they are not recognised. */
  readonly foreignNames?: ProviderForeignNames;
};

/**
 * How other gateways name a provider, declared by its plugin so that the importers
 * (`llm-gateway import litellm`) name none.
 */
export interface ProviderForeignNames {
  /** LiteLLM's `<prefix>/<model>` prefixes for this provider (`azure`, `vertex_ai`, `together_ai`). */
  readonly litellm?: readonly string[];
  /** Model names LiteLLM sends to this provider without a prefix (`claude-…`). */
  readonly litellmBareModels?: RegExp;
  /**
   * A LiteLLM deployment's `api_base` and `api_version` as this provider's target settings (a cloud
   * that names resources and deployments in headers). Default: `api_base` as the custom host.
   */
  litellmTarget?(deployment: { readonly model: string; readonly apiBase?: string; readonly apiVersion?: string }): { readonly headers?: Record<string, string>; readonly customHost?: string };
}
