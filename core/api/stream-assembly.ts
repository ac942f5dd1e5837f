import type { StreamAssembly } from '../cache/cacheable.js';
import { isRecord } from '../spec/is-record.js';
import type { ChatChoice, ChatCompletionChunk, ChatResponse, CompletionChoice, CompletionResponse, ToolCall, Usage } from '../spec/unified.js';
import type { ChunkIdentity } from './stream-relay.js';

/** Appends the arrays of a chunk's `logprobs` object to those gathered so far (chat: `content`, `refusal`; completions: `tokens`, …). */
function mergeLogprobs(gathered: unknown, next: unknown): unknown {
  if (!isRecord(next)) return gathered ?? next ?? null;
  const merged: Record<string, unknown> = isRecord(gathered) ? { ...gathered } : {};
  for (const [field, value] of Object.entries(next)) {
    const before = merged[field];
    merged[field] = Array.isArray(value) && Array.isArray(before) ? [...before, ...value] : value;
  }
  return merged;
}

/** The identity (id, created, model, fingerprint) of the first chunk, and the usage of the last that has one. */
abstract class Assembly<Chunk extends ChunkIdentity & { usage?: Usage | null; choices: unknown[] }, Answer> implements StreamAssembly<Chunk, Answer> {
  protected identity?: ChunkIdentity;
  protected usage?: Usage;

  push(chunk: Chunk): void {
    this.identity ??= { id: chunk.id, created: chunk.created, model: chunk.model, system_fingerprint: chunk.system_fingerprint };
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices) if (isRecord(choice) && typeof choice.index === 'number') this.choice(choice.index, choice);
  }

  protected abstract choice(index: number, choice: Record<string, unknown>): void;
  abstract result(): Answer | undefined;

  /** The answer's top-level fields, `object` given. */
  protected whole(object: string): Record<string, unknown> {
    const identity = this.identity!;
    const whole: Record<string, unknown> = { id: identity.id ?? '', object, created: identity.created ?? 0, model: identity.model ?? '' };
    if (identity.system_fingerprint !== undefined) whole.system_fingerprint = identity.system_fingerprint;
    return whole;
  }
}

interface ChatParts {
  role?: string;
  fields: Record<string, unknown>;
  toolCalls: Map<number, { id?: string; type?: string; name: string; arguments: string }>;
  finish?: string | null;
  logprobs?: unknown;
}

/**
 * A chat stream added up: per choice the role, the text fields of the deltas concatenated
 * (`content`, `refusal`, a provider's `reasoning_content`), tool calls by index with their
 * arguments concatenated, the finish reason and the logprobs; the usage of the usage chunk. No
 * answer when a choice never finished.
 */
export class ChatAssembly extends Assembly<ChatCompletionChunk, ChatResponse> {
  private readonly choices = new Map<number, ChatParts>();

  protected choice(index: number, choice: Record<string, unknown>): void {
    let parts = this.choices.get(index);
    if (parts === undefined) this.choices.set(index, (parts = { fields: {}, toolCalls: new Map() }));
    const delta = isRecord(choice.delta) ? choice.delta : {};
    for (const [field, value] of Object.entries(delta)) {
      if (field === 'role') parts.role = String(value);
      else if (field === 'tool_calls' && Array.isArray(value)) this.toolCalls(parts, value);
      else if (typeof value === 'string' && typeof parts.fields[field] === 'string') parts.fields[field] += value;
      else if (value !== null || !(field in parts.fields)) parts.fields[field] = value;
    }
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) parts.finish = String(choice.finish_reason);
    if (choice.logprobs !== undefined && choice.logprobs !== null) parts.logprobs = mergeLogprobs(parts.logprobs, choice.logprobs);
  }

  private toolCalls(parts: ChatParts, calls: unknown[]): void {
    for (const call of calls) {
      if (!isRecord(call) || typeof call.index !== 'number') continue;
      const known = parts.toolCalls.get(call.index) ?? { name: '', arguments: '' };
      const fn = isRecord(call.function) ? call.function : {};
      if (typeof call.id === 'string') known.id = call.id;
      if (typeof call.type === 'string') known.type = call.type;
      if (typeof fn.name === 'string') known.name += fn.name;
      if (typeof fn.arguments === 'string') known.arguments += fn.arguments;
      parts.toolCalls.set(call.index, known);
    }
  }

  result(): ChatResponse | undefined {
    if (this.identity === undefined || this.choices.size === 0) return undefined;
    const choices: ChatChoice[] = [];
    for (const [index, parts] of [...this.choices].sort((left, right) => left[0] - right[0])) {
      if (parts.finish === undefined) return undefined;
      const message: ChatChoice['message'] = { role: 'assistant', ...parts.fields, content: typeof parts.fields.content === 'string' ? parts.fields.content : null };
      if (parts.toolCalls.size > 0) {
        message.tool_calls = [...parts.toolCalls.entries()]
          .sort((left, right) => left[0] - right[0])
          .map(([, call]): ToolCall => ({ id: call.id ?? '', type: 'function', function: { name: call.name, arguments: call.arguments } }));
      }
      choices.push({ index, message, logprobs: parts.logprobs ?? null, finish_reason: parts.finish });
    }
    const answer = { ...this.whole('chat.completion'), choices } as ChatResponse;
    if (this.usage) answer.usage = this.usage;
    return answer;
  }
}

/** A text completion stream added up: per choice the text concatenated, the finish reason and the logprobs' arrays. */
export class CompletionAssembly extends Assembly<CompletionResponse, CompletionResponse> {
  private readonly choices = new Map<number, { text: string; finish?: string; logprobs?: unknown }>();

  protected choice(index: number, choice: Record<string, unknown>): void {
    const parts = this.choices.get(index) ?? { text: '' };
    if (typeof choice.text === 'string') parts.text += choice.text;
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) parts.finish = String(choice.finish_reason);
    if (choice.logprobs !== undefined && choice.logprobs !== null) parts.logprobs = mergeLogprobs(parts.logprobs, choice.logprobs);
    this.choices.set(index, parts);
  }

  result(): CompletionResponse | undefined {
    if (this.identity === undefined || this.choices.size === 0) return undefined;
    const choices: CompletionChoice[] = [];
    for (const [index, parts] of [...this.choices].sort((left, right) => left[0] - right[0])) {
      if (parts.finish === undefined) return undefined;
      choices.push({ index, text: parts.text, logprobs: parts.logprobs ?? null, finish_reason: parts.finish });
    }
    const answer = { ...this.whole('text_completion'), choices } as CompletionResponse;
    if (this.usage) answer.usage = this.usage;
    return answer;
  }
}
