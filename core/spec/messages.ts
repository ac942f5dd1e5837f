/**
 * The Anthropic Messages API (`POST /v1/messages`) as the gateway reads it: an inbound protocol
 * beside the unified (OpenAI-shaped) chat API. Only what the gateway reads is typed precisely;
 * everything else is carried untouched, so a provider that takes the protocol natively receives
 * the client's fields as sent.
 */

/** One content block of a message (`text`, `image`, `document`, `tool_use`, `tool_result`, `thinking`, …). */
export type MessagesBlock = { type: string; [field: string]: unknown };

export interface MessagesMessage {
  /** `system` entries inside `messages` are accepted (agents send them) and read as system text. */
  role: 'user' | 'assistant' | 'system';
  content: string | MessagesBlock[];
}

/** `POST /v1/messages` body, after validation. Unknown top-level fields are kept. */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: MessagesMessage[];
  system?: string | MessagesBlock[];
  stream?: boolean;
  [field: string]: unknown;
}

/** `POST /v1/messages/count_tokens` body, after validation: a Messages request without `max_tokens`. */
export interface MessagesCountRequest {
  model: string;
  messages: MessagesMessage[];
  system?: string | MessagesBlock[];
  [field: string]: unknown;
}

/** Token usage as the Messages API reports it: cache reads and writes are counted apart from `input_tokens`. */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  [field: string]: unknown;
}

/** The Message object: the answer of `POST /v1/messages`. */
export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: MessagesBlock[];
  /** `end_turn`, `max_tokens`, `stop_sequence`, `tool_use`, `pause_turn`, `refusal`, … */
  stop_reason: string | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
  [field: string]: unknown;
}

/**
 * One event of a Messages stream, as its JSON `data` (whose `type` is also the SSE event name):
 * `message_start`, `content_block_start`, `content_block_delta`, `content_block_stop`,
 * `message_delta`, `message_stop`, `ping`, `error`.
 */
export type MessagesStreamEvent = { type: string; [field: string]: unknown };

/** The answer of `POST /v1/messages/count_tokens`. */
export interface MessagesTokenCount {
  input_tokens: number;
  [field: string]: unknown;
}
