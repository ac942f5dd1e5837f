/**
 * The unified, OpenAI-shaped API the gateway speaks to its clients. Provider plugins translate
 * these values to and from their own APIs. Only what the gateway reads is typed precisely; fields
 * it carries untouched stay `unknown` so that nothing is lost on the way through.
 */

/** The operations of the unified API. Pass-through requests are `passthrough`. */
export type OperationName =
  | 'chat'
  | 'completion'
  | 'embed'
  /** `POST /v1/rerank` (Cohere's rerank shape). */
  | 'rerank'
  | 'imageGenerate'
  | 'imageEdit'
  | 'imageVariation'
  | 'speech'
  | 'transcription'
  | 'translation'
  | 'models'
  /** `POST /v1/messages` (the Anthropic Messages API). */
  | 'messages'
  /** `POST /v1/messages/count_tokens`. */
  | 'messagesCountTokens'
  /** `POST /v1/responses` (the OpenAI Responses API). */
  | 'responses'
  /** `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent` (the Gemini API). */
  | 'generateContent'
  /** `POST /v1beta/models/{model}:countTokens`. */
  | 'geminiCountTokens'
  /** `POST /v1beta/models/{model}:embedContent` and `:batchEmbedContents`. */
  | 'geminiEmbed'
  /** `GET /v1beta/models`. */
  | 'geminiModels'
  /** `GET /v1/realtime?model=…` upgraded to a WebSocket: one session, relayed (the Realtime API). */
  | 'realtime'
  | 'passthrough'
  /** A batch translated for a provider's own batch API: one log entry per batch, written when it ends (docs/batches.md). */
  | 'batch'
  /** A tool call through the MCP gateway (`/mcp`): guardrails judge its arguments (input) and result (output). */
  | 'mcp';

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';

export interface ChatMessage {
  role: ChatRole;
  content?: unknown;
  name?: string;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
  [field: string]: unknown;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** `POST /v1/chat/completions` body, after validation. Unknown top-level fields are kept. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  thinking?: { type: 'enabled' | 'disabled'; budget_tokens?: number } | null;
  [field: string]: unknown;
}

/** Token usage of one request. Extra detail objects are carried when the provider gives them. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: Record<string, unknown> | null;
  completion_tokens_details?: Record<string, unknown> | null;
  [field: string]: unknown;
}

export interface ChatChoice {
  index: number;
  message: {
    role: 'assistant';
    content: string | null;
    tool_calls?: ToolCall[];
    content_blocks?: Array<{ type: string; text?: string }> | null;
    [field: string]: unknown;
  };
  finish_reason: string | null;
  logprobs: unknown;
  [field: string]: unknown;
}

export interface ChatResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: Usage | null;
  system_fingerprint?: string | null;
  [field: string]: unknown;
}

export interface ChatChunkChoice {
  index: number;
  delta: {
    role?: string;
    content?: string | null;
    tool_calls?: Array<{ index: number; id?: string; type?: 'function'; function?: { name?: string; arguments?: string } }>;
    [field: string]: unknown;
  };
  finish_reason: string | null;
  logprobs?: unknown;
  [field: string]: unknown;
}

/** One streamed chunk (`object: chat.completion.chunk`). */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: Usage | null;
  system_fingerprint?: string | null;
  [field: string]: unknown;
}

/** The error body every gateway error and every mapped upstream error has (declared with the error catalogue). */
export type { ErrorBody } from '../errors.js';

/** `POST /v1/completions` body, after validation. */
export interface CompletionRequest {
  model: string;
  prompt?: string | string[] | number[] | number[][] | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number | null;
  [field: string]: unknown;
}

export interface CompletionChoice {
  index: number;
  text: string;
  finish_reason: string | null;
  logprobs: unknown;
  [field: string]: unknown;
}

/** A text completion, plain or one streamed chunk: both have `object: text_completion`. */
export interface CompletionResponse {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: CompletionChoice[];
  usage?: Usage | null;
  system_fingerprint?: string | null;
  [field: string]: unknown;
}

/** `POST /v1/embeddings` body, after validation. */
export interface EmbeddingRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  [field: string]: unknown;
}

export interface EmbeddingResponse {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
  [field: string]: unknown;
}

/** A document to rerank: a string, or an object whose `text` is ranked (its other fields are carried). */
export type RerankDocument = string | { text: string; [field: string]: unknown };

/** `POST /v1/rerank` body (Cohere's shape), after validation. */
export interface RerankRequest {
  model: string;
  query: string;
  documents: RerankDocument[];
  /** How many results to answer, best first (default: every document). */
  top_n?: number;
  /** Whether each result carries its document (default false). */
  return_documents?: boolean;
  [field: string]: unknown;
}

/** One ranked document: its position in the request's `documents`, and its score. */
export interface RerankResult {
  index: number;
  relevance_score: number;
  /** The document as the client sent it (a string as `{ text }`); only when `return_documents` is true. */
  document?: { text: string; [field: string]: unknown };
}

/**
 * The rerank answer. A provider's adapter may return its results in any order and more than
 * `top_n` of them; the core sorts them best first, keeps `top_n` and sets or removes `document`.
 */
export interface RerankResponse {
  id?: string;
  model: string;
  results: RerankResult[];
  /** What the provider billed: tokens and/or search units (Cohere's billing unit), when it reports them. */
  usage?: { prompt_tokens?: number; total_tokens?: number; search_units?: number };
  [field: string]: unknown;
}

/** `POST /v1/images/generations` body, after validation. */
export interface ImageGenerateRequest {
  prompt: string;
  model?: string;
  n?: number;
  quality?: string;
  response_format?: 'url' | 'b64_json';
  size?: string;
  style?: string;
  user?: string;
  [field: string]: unknown;
}

export interface ImageResponse {
  created: number;
  data: Array<{ b64_json?: string; url?: string; revised_prompt?: string }>;
  [field: string]: unknown;
}

/** `POST /v1/audio/speech` body, after validation. */
export interface SpeechRequest {
  model: string;
  input: string;
  voice: string;
  response_format?: 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';
  speed?: number;
  [field: string]: unknown;
}

/** A file part of a multipart request, spooled to a temporary file while it streamed in. */
export interface FormFile {
  /** The form field name. */
  readonly field: string;
  readonly filename: string;
  readonly contentType: string;
  /** Path of the temporary file holding the bytes exactly as received (removed after the response). */
  readonly path: string;
  readonly size: number;
}

/** A parsed multipart/form-data request (images edit / variation, audio transcription / translation). */
export interface MultipartForm {
  /** Text fields, by name (the last value wins; repeated fields such as `timestamp_granularities[]` keep all). */
  readonly fields: Readonly<Record<string, string>>;
  readonly repeated: Readonly<Record<string, readonly string[]>>;
  readonly files: readonly FormFile[];
}

/** `GET /v1/models`. */
export interface ModelList {
  object: 'list';
  data: Array<{ id: string; object: 'model'; created: number; owned_by: string; [field: string]: unknown }>;
}
