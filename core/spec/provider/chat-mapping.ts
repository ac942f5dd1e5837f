import { randomUUID } from 'node:crypto';
import { errors, errorTypeForStatus } from '../../errors.js';
import { type FilePart, readFilePart } from '../content-parts.js';
import { isRecord } from '../is-record.js';
import type { Clock } from '../manifest.js';
import type { UpstreamReply } from '../provider.js';
import type { ChatMessage, ErrorBody } from '../unified.js';

/**
 * The chat mapping helpers every native-API provider needs to translate the unified (OpenAI-shaped)
 * chat API: reading content parts, tool choices and tools, stop lists, error bodies, stream event
 * data, reasoning blocks, ids and timestamps. Part of the provider toolkit (`core/spec/provider`).
 */

/** A user or tool content part, as the unified API gives it. */
export type ChatContentPart = { type: 'text'; text: string } | { type: 'image'; url: string; detail?: string } | { type: 'file'; file: FilePart };

/** The parts of a message's `content` (a string is one text part; unknown part types are refused). */
export function contentParts(content: unknown, param: string): ChatContentPart[] {
  if (content == null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw errors.invalidRequest(`${param} must be a string or an array of content parts.`, { param, code: 'invalid_type' });
  return content.map((part, index): ChatContentPart => {
    const value = (part ?? {}) as Record<string, unknown>;
    if (value.type === 'text' && typeof value.text === 'string') return { type: 'text', text: value.text };
    if (value.type === 'image_url') {
      const image = value.image_url as { url?: unknown; detail?: unknown } | string | undefined;
      const url = typeof image === 'string' ? image : image?.url;
      if (typeof url !== 'string') throw errors.invalidRequest('An image_url part needs a url.', { param: `${param}[${index}].image_url.url`, code: 'invalid_type' });
      const detail = typeof image === 'object' && typeof image.detail === 'string' ? image.detail : undefined;
      return { type: 'image', url, detail };
    }
    if (value.type === 'file') return { type: 'file', file: readFilePart(value) };
    throw errors.invalidRequest(`Content part type "${String(value.type)}" is not supported by this provider.`, {
      param: `${param}[${index}].type`,
      code: 'unsupported_parameter',
    });
  });
}

/** The text of a message's content (text parts joined); images are refused where only text fits. */
export function contentText(content: unknown, param: string): string {
  return contentParts(content, param)
    .map((part, index) => {
      if (part.type !== 'text') throw errors.invalidRequest('Only text content is accepted here.', { param: `${param}[${index}]`, code: 'unsupported_parameter' });
      return part.text;
    })
    .join('');
}

/** `stop` as a list. */
export const stopList = (stop: unknown): string[] | undefined =>
  typeof stop === 'string' ? [stop] : Array.isArray(stop) && stop.length > 0 ? stop.filter((item): item is string => typeof item === 'string') : undefined;

/** The tool choice of a request, normalised (`function_call` is not read: tools only). */
export type ToolChoice = { kind: 'auto' | 'none' | 'required' } | { kind: 'named'; name: string };

export function toolChoiceOf(value: unknown): ToolChoice | undefined {
  if (value === 'auto' || value === 'none' || value === 'required') return { kind: value };
  if (value && typeof value === 'object') {
    const name = (value as { function?: { name?: unknown } }).function?.name;
    if (typeof name === 'string') return { kind: 'named', name };
  }
  return undefined;
}

/** The unified request's function tools, as `{name, description, parameters}`. */
export function functionTools(tools: unknown): Array<{ name: string; description?: string; parameters: Record<string, unknown> }> {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter((tool) => tool && typeof tool === 'object' && (tool as { type?: unknown }).type === 'function')
    .map((tool) => {
      const fn = (tool as { function: { name: string; description?: string; parameters?: Record<string, unknown> } }).function;
      const out: { name: string; description?: string; parameters: Record<string, unknown> } = {
        name: fn.name,
        parameters: fn.parameters ?? { type: 'object', properties: {} },
      };
      if (fn.description) out.description = fn.description;
      return out;
    });
}

/** Refuses `n` > 1 for providers that answer one choice per request. */
export function requireSingleChoice(n: unknown, provider: string): void {
  if (typeof n === 'number' && n > 1) throw errors.invalidRequest(`The provider "${provider}" returns one choice per request; n must be 1.`, { param: 'n', code: 'unsupported_parameter' });
}

/** Reads an upstream error reply's JSON (undefined when it is not JSON) and a short text snippet. */
export function readErrorReply(reply: UpstreamReply): { json: Record<string, unknown> | undefined; snippet: string } {
  const text = Buffer.from(reply.body).toString('utf8');
  let json: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (isRecord(parsed)) json = parsed;
  } catch {
    // described by the snippet
  }
  return { json, snippet: text.replace(/\s+/g, ' ').trim().slice(0, 200) };
}

/** An error body with a message naming the status when the provider gave none. */
export function errorBody(status: number, message: unknown, code: unknown = null, snippet = ''): ErrorBody {
  const text = typeof message === 'string' && message ? message : `The provider returned HTTP ${status}${snippet ? `: ${snippet}` : '.'}`;
  return { message: text, type: errorTypeForStatus(status), param: null, code: typeof code === 'string' && code ? code : null };
}

/** A stream error body. */
export const streamError = (message: string, code: string, type = 'upstream_error'): ErrorBody => ({ message, type, param: null, code });

/** The error a stream ends with when the provider sends an event that is not JSON. */
export const MALFORMED_EVENT: ErrorBody = streamError('The provider sent a stream event that is not JSON.', 'malformed_stream');

/**
 * One block of a non-streamed answer's `message.content_blocks` (only when strict compliance is off),
 * in answer order. A `thinking` block's `signature` and a `redacted_thinking` block's `data` must come
 * back unchanged in the assistant message's `content_blocks` (providers refuse thinking + tools
 * otherwise).
 */
export type ContentBlock =
  | { type: 'thinking'; text: string; signature?: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'text' | 'tool_plan'; text: string };

/**
 * One streamed piece of a content block, in `delta.content_blocks`. Pieces with the same `index`
 * belong to one block: their `text` concatenates, `signature` / `data` complete it. Collected by
 * index, the pieces give the non-streamed `content_blocks` entries (plus `index`).
 */
export type ContentBlockDelta = { index: number } & (
  | { type: 'thinking'; text?: string; signature?: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_plan'; text: string }
);

/** The `delta` fields carrying one content block piece. */
export const contentBlockDelta = (piece: ContentBlockDelta): { content_blocks: ContentBlockDelta[] } => ({ content_blocks: [piece] });

/** Numbers a stream's content blocks 0, 1, … in order of first appearance, by the provider's own block key. */
export function blockNumbering(): (key: string) => number {
  const numbers = new Map<string, number>();
  return (key) => {
    let number = numbers.get(key);
    if (number === undefined) {
      number = numbers.size;
      numbers.set(key, number);
    }
    return number;
  };
}

/** Reasoning blocks a client sends back in an assistant message's `content_blocks` (other entries are skipped). */
export function thinkingBlocksOf(message: ChatMessage): Array<Extract<ContentBlock, { type: 'thinking' | 'redacted_thinking' }>> {
  if (!Array.isArray(message.content_blocks)) return [];
  const blocks: Array<Extract<ContentBlock, { type: 'thinking' | 'redacted_thinking' }>> = [];
  for (const block of message.content_blocks as unknown[]) {
    if (!isRecord(block)) continue;
    if (block.type === 'thinking') {
      const text = typeof block.text === 'string' ? block.text : typeof block.thinking === 'string' ? block.thinking : '';
      blocks.push(typeof block.signature === 'string' && block.signature ? { type: 'thinking', text, signature: block.signature } : { type: 'thinking', text });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      blocks.push({ type: 'redacted_thinking', data: block.data });
    }
  }
  return blocks;
}

/**
 * OpenAI's `reasoning_effort` levels as thinking budgets (tokens), for providers whose API takes a
 * budget of thinking tokens instead of a level. `none` and `minimal` think not at all.
 */
export const THINKING_BUDGET_BY_EFFORT: Readonly<Record<string, number>> = { none: 0, minimal: 0, low: 1024, medium: 8192, high: 24576, xhigh: 32768 };

/** A completion id for providers whose answers carry none. */
export const completionId = (): string => `chatcmpl-${randomUUID().replace(/-/g, '')}`;

/**
 * The current time in whole seconds (a completion's `created`), on `clock` when given: pass the
 * clock the plugin's `create(dependencies)` received, so tests can fix time.
 */
export const nowSeconds = (clock?: Clock): number => Math.floor((clock ? clock.now() : Date.now()) / 1000);

/** A float vector as OpenAI's `encoding_format: base64` (little-endian float32). */
export const vectorToBase64 = (vector: readonly number[]): string => Buffer.from(new Float32Array(vector).buffer).toString('base64');

/** Whether any message is a tool turn or an assistant tool call (some APIs then need the tools declared). */
export const hasToolTurns = (messages: readonly ChatMessage[]): boolean =>
  messages.some((message) => message.role === 'tool' || (message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0));

/** Parses a stream event's JSON data; undefined when it is not a JSON object. */
export function parseEventData(data: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(data) as unknown;
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
