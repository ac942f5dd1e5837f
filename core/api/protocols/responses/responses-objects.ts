import { randomBytes } from 'node:crypto';
import { isRecord } from '../../../spec/is-record.js';
import type { ResponseItem, ResponseObject, ResponsesRequest, ResponseStatus, ResponseUsage } from '../../../spec/responses.js';
import type { Usage } from '../../../spec/unified.js';
import { type ReasoningBlock, sealReasoning } from './responses-reasoning.js';
import type { ToolName } from './responses-to-chat.js';

/** Builders of the Response object and its items, shared by plain answers and the stream encoder. */

/** A new id with OpenAI's prefix for the kind (`resp`, `msg`, `fc`, `rs`, `ctc`). */
export const newId = (prefix: string): string => `${prefix}_${randomBytes(16).toString('hex')}`;

/** The Response before any output: the request's settings echoed, as OpenAI does. */
export function responseShell(request: ResponsesRequest, id: string, createdAt: number): ResponseObject {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    metadata: request.metadata ?? {},
    model: request.model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: { format: request.text?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage: null,
    user: request.user ?? null,
  };
}

const detail = (details: unknown, field: string): number => (isRecord(details) && typeof details[field] === 'number' ? details[field] : 0);

/** Unified chat usage as the Responses usage object. */
export function responseUsage(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: detail(usage.prompt_tokens_details, 'cached_tokens') },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: detail(usage.completion_tokens_details, 'reasoning_tokens') },
    total_tokens: usage.total_tokens,
  };
}

/** Responses usage as unified chat usage (for the log, metrics and budgets). */
export function chatUsage(usage: unknown): Usage | undefined {
  if (!isRecord(usage) || typeof usage.input_tokens !== 'number' || typeof usage.output_tokens !== 'number') return undefined;
  const cached = detail(usage.input_tokens_details, 'cached_tokens');
  const reasoning = detail(usage.output_tokens_details, 'reasoning_tokens');
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: typeof usage.total_tokens === 'number' ? usage.total_tokens : usage.input_tokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: cached },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}

/** The status and `incomplete_details` a chat finish reason gives. */
export function statusOf(finishReason: string | null | undefined): { status: ResponseStatus; incomplete_details: { reason: string } | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export const outputTextPart = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });

export function messageItem(id: string, text: string, status: string): ResponseItem {
  return { id, type: 'message', status, role: 'assistant', content: [outputTextPart(text)] };
}

/**
 * A reasoning item: the thinking text as its summary, and the blocks sealed in `encrypted_content`
 * (kept in the store always; shown to the client when it asked with `include`).
 */
export function reasoningItem(id: string, provider: string, blocks: readonly ReasoningBlock[], status = 'completed'): ResponseItem {
  const text = blocks.map((block) => (block.type === 'thinking' ? block.text : '')).join('');
  const signed = blocks.some((block) => block.type === 'redacted_thinking' || block.signature);
  const item: ResponseItem = { id, type: 'reasoning', summary: text ? [{ type: 'summary_text', text }] : [], status };
  if (signed || text) item.encrypted_content = sealReasoning(provider, blocks);
  return item;
}

/** A tool call of the chat answer as the Responses item of the tool it calls (function or custom, its namespace restored). */
export function callItem(id: string, call: { id: string; name: string; arguments: string }, tools: ReadonlyMap<string, ToolName>, status = 'completed'): ResponseItem {
  const tool = tools.get(call.name);
  const namespace = tool?.namespace ? { namespace: tool.namespace } : {};
  if (tool?.kind === 'custom') return { id, type: 'custom_tool_call', status, call_id: call.id, name: tool.name, input: customInput(call.arguments), ...namespace };
  return { id, type: 'function_call', status, call_id: call.id, name: tool?.name ?? call.name, arguments: call.arguments, ...namespace };
}

/** A custom tool's input from the one-string-argument object it travelled in. */
export function customInput(argumentsText: string): string {
  try {
    const value = JSON.parse(argumentsText) as unknown;
    if (isRecord(value) && typeof value.input === 'string') return value.input;
  } catch {
    // not JSON: the model wrote the input itself
  }
  return argumentsText;
}

/** The items as the client sees them: `encrypted_content` only when asked for with `include`. */
export function clientItems(items: readonly ResponseItem[], include: readonly string[] | null | undefined): ResponseItem[] {
  if (include?.includes('reasoning.encrypted_content')) return [...items];
  return items.map((item) => {
    if (item.type !== 'reasoning' || !('encrypted_content' in item)) return item;
    const { encrypted_content: _hidden, ...shown } = item;
    return shown;
  });
}

/** The Response as the client sees it. */
export const clientResponse = (response: ResponseObject, include: readonly string[] | null | undefined): ResponseObject => ({ ...response, output: clientItems(response.output, include) });
