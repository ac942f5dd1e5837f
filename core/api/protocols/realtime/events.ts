import type { Usage } from '../../../spec/unified.js';

/** How far into a message the gateway looks for its top-level `type` (the Realtime API puts it first; audio payloads come after it). */
const TYPE_SCAN_CHARS = 2048;

/**
 * The top-level `type` of a Realtime event, found without parsing the message: a scan of its first
 * characters that skips strings and nested objects (an `item.type` is not the event's). Audio
 * events carry tens of kilobytes of base64; parsing each one only to route it would cost the relay
 * more than it is allowed to add. Undefined when the message is not a JSON object whose `type`
 * comes within the first {@link TYPE_SCAN_CHARS} characters.
 */
export function eventTypeOf(message: Buffer): string | undefined {
  const length = Math.min(message.length, TYPE_SCAN_CHARS);
  let depth = 0;
  let index = 0;
  while (index < length) {
    const byte = message[index];
    if (byte === QUOTE) {
      const end = stringEnd(message, index, length);
      if (end === -1) return undefined;
      if (depth === 1 && end - index === 5 && message[index + 1] === 0x74 && message[index + 2] === 0x79 && message[index + 3] === 0x70 && message[index + 4] === 0x65) return typeValue(message, end + 1, length);
      index = end + 1;
      continue;
    }
    if (byte === 0x7b /* { */ || byte === 0x5b /* [ */) depth++;
    else if (byte === 0x7d /* } */ || byte === 0x5d /* ] */) depth--;
    index++;
  }
  return undefined;
}

const QUOTE = 0x22;
const isSpace = (byte: number): boolean => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** The string value after a `"type"` key (`: "…"`), read from the bytes; undefined when it is not a plain string. */
function typeValue(message: Buffer, from: number, length: number): string | undefined {
  let index = from;
  while (index < length && isSpace(message[index])) index++;
  if (message[index] !== 0x3a /* : */) return undefined;
  index++;
  while (index < length && isSpace(message[index])) index++;
  if (message[index] !== QUOTE) return undefined;
  const end = stringEnd(message, index, length);
  if (end === -1 || end - index > 129) return undefined;
  const value = message.toString('latin1', index + 1, end);
  // An escaped name is no event type the gateway acts on.
  return value.includes('\\') ? undefined : value;
}

/** Index of the quote closing the string opened at `start`, or -1 before `length`. */
function stringEnd(message: Buffer, start: number, length: number): number {
  let index = start + 1;
  while (index < length) {
    const byte = message[index];
    if (byte === 0x5c /* \ */) index += 2;
    else if (byte === QUOTE) return index;
    else index++;
  }
  return -1;
}

/** Parses a message as a JSON object; undefined when it is not one. */
export function parseEvent(message: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(message.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
const record = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {});

/**
 * The usage of a `response.done` event (`response.usage`: `input_tokens`, `output_tokens`,
 * `total_tokens`, with cached, text and audio details) in the unified shape; undefined when absent.
 */
export function usageOf(event: Record<string, unknown>): Usage | undefined {
  const usage = record(event.response).usage;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const fields = usage as Record<string, unknown>;
  const input = record(fields.input_token_details);
  const output = record(fields.output_token_details);
  const prompt = count(fields.input_tokens);
  const completion = count(fields.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: count(fields.total_tokens) || prompt + completion,
    prompt_tokens_details: { cached_tokens: count(input.cached_tokens), audio_tokens: count(input.audio_tokens), text_tokens: count(input.text_tokens) },
    completion_tokens_details: { audio_tokens: count(output.audio_tokens), text_tokens: count(output.text_tokens) },
  };
}

/** Adds `more` to `total` (token counts and their details). */
export function addUsage(total: Usage | undefined, more: Usage): Usage {
  if (total === undefined) return more;
  const details = (left: Record<string, unknown> | null | undefined, right: Record<string, unknown> | null | undefined): Record<string, number> => {
    const sum: Record<string, number> = {};
    for (const name of new Set([...Object.keys(left ?? {}), ...Object.keys(right ?? {})])) sum[name] = count(left?.[name]) + count(right?.[name]);
    return sum;
  };
  return {
    prompt_tokens: total.prompt_tokens + more.prompt_tokens,
    completion_tokens: total.completion_tokens + more.completion_tokens,
    total_tokens: total.total_tokens + more.total_tokens,
    prompt_tokens_details: details(total.prompt_tokens_details as Record<string, unknown>, more.prompt_tokens_details as Record<string, unknown>),
    completion_tokens_details: details(total.completion_tokens_details as Record<string, unknown>, more.completion_tokens_details as Record<string, unknown>),
  };
}

/**
 * The texts a client's `conversation.item.create` adds (its item's `input_text` and `text` parts),
 * and a rewrite that puts judged texts back in their places; none for other items (audio, function
 * call outputs are not text the policy reads).
 */
export function itemTexts(event: Record<string, unknown>): { texts: string[]; rewrite: (texts: readonly string[]) => Record<string, unknown> } {
  const item = record(event.item);
  const content = Array.isArray(item.content) ? (item.content as unknown[]) : [];
  const places: number[] = [];
  const texts: string[] = [];
  content.forEach((part, index) => {
    const fields = record(part);
    if ((fields.type === 'input_text' || fields.type === 'text') && typeof fields.text === 'string') {
      places.push(index);
      texts.push(fields.text);
    }
  });
  const rewrite = (judged: readonly string[]): Record<string, unknown> => {
    const parts = [...content];
    places.forEach((place, index) => (parts[place] = { ...record(content[place]), text: judged[index] ?? '' }));
    return { ...event, item: { ...item, content: parts } };
  };
  return { texts, rewrite };
}

/** The finished text of a server event that closes a text or transcript part, with the key of its part; undefined for other events. */
export function finishedText(type: string, event: Record<string, unknown>): { part: string; text: string; kind: 'output' | 'input' } | undefined {
  if (TEXT_DONE.has(type)) return { part: partKey(event), text: String(event.text ?? ''), kind: 'output' };
  if (TRANSCRIPT_DONE.has(type)) return { part: partKey(event), text: String(event.transcript ?? ''), kind: 'output' };
  if (type === 'conversation.item.input_audio_transcription.completed') return { part: partKey(event), text: String(event.transcript ?? ''), kind: 'input' };
  return undefined;
}

/** The part a text delta or done event belongs to: response, item, content index. */
export const partKey = (event: Record<string, unknown>): string => `${String(event.response_id ?? '')}:${String(event.item_id ?? '')}:${String(event.content_index ?? '')}`;

/** Text parts' deltas and ends, in the generally available interface and the beta one. */
export const TEXT_DELTAS = new Set(['response.output_text.delta', 'response.text.delta', 'response.output_audio_transcript.delta', 'response.audio_transcript.delta']);
const TEXT_DONE = new Set(['response.output_text.done', 'response.text.done']);
const TRANSCRIPT_DONE = new Set(['response.output_audio_transcript.done', 'response.audio_transcript.done']);
