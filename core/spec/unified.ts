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
  | 'imageGenerate'
  | 'imageEdit'
  | 'imageVariation'
  | 'speech'
  | 'passthrough';

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

/** The error body every gateway error and every mapped upstream error has. */
export interface ErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
  /** Set when the error came from a provider. */
  provider?: string;
}
