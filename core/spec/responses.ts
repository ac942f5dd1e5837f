/**
 * The OpenAI Responses API as the gateway reads and writes it. Only what the gateway reads or builds
 * is typed; everything else a client sends is carried as it came (`[field: string]: unknown`).
 */

/** `POST /v1/responses` body, after validation. */
export interface ResponsesRequest {
  model: string;
  input?: string | ResponseItem[];
  instructions?: string | null;
  tools?: ResponsesTool[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean | null;
  text?: { format?: TextFormat; verbosity?: string | null; [field: string]: unknown } | null;
  reasoning?: { effort?: string | null; summary?: string | null; [field: string]: unknown } | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  metadata?: Record<string, string> | null;
  user?: string;
  store?: boolean | null;
  previous_response_id?: string | null;
  stream?: boolean | null;
  include?: string[] | null;
  [field: string]: unknown;
}

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean | null };

/** A tool of the request: `function`, `custom`, `namespace` (a group of those two), or a built-in tool run by the provider. */
export interface ResponsesTool {
  type: string;
  name?: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
  tools?: ResponsesTool[];
  [field: string]: unknown;
}

/** A content part of a message item. */
export interface ContentPart {
  type: string;
  text?: string;
  [field: string]: unknown;
}

/** One item of a conversation: input messages, output messages, calls and their outputs, reasoning. */
export interface ResponseItem {
  type?: string;
  id?: string;
  role?: string;
  content?: string | ContentPart[];
  status?: string;
  [field: string]: unknown;
}

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'completed' | 'incomplete' | 'failed' | 'in_progress';

/** The Response object. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  model: string;
  output: ResponseItem[];
  usage?: ResponseUsage | null;
  [field: string]: unknown;
}

/** One event of a Responses stream (the `type` is also the SSE event name). */
export interface ResponseEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}
