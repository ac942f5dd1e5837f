import { randomUUID } from 'node:crypto';
import { type ChatChoice, type ChatRequest, type ChatResponse, isRecord, type ProviderTarget, type ToolCall, type Usage } from '../../../core/spec/index.js';
import type { ContentBlock } from '../../shared/chat-mapping.js';

export interface GeminiCandidate {
  content?: { role?: string; parts?: Array<Record<string, unknown>> };
  finishReason?: string;
  index?: number;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface GeminiResponseBody {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/** Gemini `finishReason` → OpenAI `finish_reason`; a stop after function calls is `tool_calls`. */
export function mapGeminiFinishReason(reason: string | undefined, calledTools: boolean): string | null {
  if (reason === undefined || reason === 'FINISH_REASON_UNSPECIFIED') return null;
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** `usageMetadata` → usage: thoughts count as completion (reasoning) tokens, cached content as cached prompt tokens. */
export function mapGeminiUsage(usage: GeminiUsageMetadata | undefined): Usage {
  const prompt = count(usage?.promptTokenCount) + count(usage?.toolUsePromptTokenCount);
  const thoughts = count(usage?.thoughtsTokenCount);
  const completion = count(usage?.candidatesTokenCount) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage?.totalTokenCount ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: count(usage?.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

/** A call id for a function call Gemini did not name (it usually does not). */
export const newCallId = (): string => `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;

/**
 * Gemini's thinking models attach a `thoughtSignature` to function calls and refuse the next turn
 * when it does not come back with the call. OpenAI clients only echo the call id, so the signature
 * travels inside it, after this marker.
 */
export const THOUGHT_SIGNATURE_MARKER = '~ts~';

export function splitCallId(id: string): { id: string; thoughtSignature?: string } {
  const at = id.indexOf(THOUGHT_SIGNATURE_MARKER);
  return at === -1 ? { id } : { id: id.slice(0, at), thoughtSignature: id.slice(at + THOUGHT_SIGNATURE_MARKER.length) };
}

export interface GeminiPartsDigest {
  text: string;
  hasText: boolean;
  thinking: string;
  toolCalls: ToolCall[];
}

/**
 * A response's candidates that are objects, each with its index (given, else its position); a
 * malformed `candidates` value counts as none.
 */
export function candidatesOf(response: GeminiResponseBody): Array<{ index: number; candidate: GeminiCandidate }> {
  if (!Array.isArray(response.candidates)) return [];
  return (response.candidates as unknown[]).flatMap((candidate, position) =>
    isRecord(candidate) ? [{ index: typeof candidate.index === 'number' ? candidate.index : position, candidate: candidate as GeminiCandidate }] : [],
  );
}

/** Splits a candidate's parts into answer text, thought text and function calls (malformed parts are skipped). */
export function digestParts(candidate: GeminiCandidate): GeminiPartsDigest {
  const digest: GeminiPartsDigest = { text: '', hasText: false, thinking: '', toolCalls: [] };
  const parts: unknown = isRecord(candidate.content) ? candidate.content.parts : undefined;
  if (!Array.isArray(parts)) return digest;
  for (const part of parts as unknown[]) {
    if (!isRecord(part)) continue;
    if (typeof part.text === 'string') {
      if (part.thought === true) digest.thinking += part.text;
      else {
        digest.text += part.text;
        digest.hasText = true;
      }
    } else if (isRecord(part.functionCall)) {
      const call = part.functionCall as { name?: unknown; args?: unknown; id?: unknown };
      const id = typeof call.id === 'string' && call.id ? call.id : newCallId();
      digest.toolCalls.push({
        id: typeof part.thoughtSignature === 'string' && part.thoughtSignature ? `${id}${THOUGHT_SIGNATURE_MARKER}${part.thoughtSignature}` : id,
        type: 'function',
        function: { name: String(call.name ?? ''), arguments: JSON.stringify(call.args ?? {}) },
      });
    }
  }
  return digest;
}

export const chatId = (responseId: string | undefined): string => `chatcmpl-${responseId ?? randomUUID()}`;

/** A `generateContent` answer as a unified chat completion. */
export function fromGeminiResponse(body: unknown, request: ChatRequest, target: ProviderTarget): ChatResponse {
  if (!isRecord(body)) throw new TypeError('Gemini response is not an object');
  const response = body as GeminiResponseBody;
  const choices: ChatChoice[] = candidatesOf(response).map(({ index, candidate }) => {
    const digest = digestParts(candidate);
    const finish = mapGeminiFinishReason(typeof candidate.finishReason === 'string' ? candidate.finishReason : undefined, digest.toolCalls.length > 0) ?? 'stop';
    const message: ChatChoice['message'] = {
      role: 'assistant',
      content: digest.hasText ? digest.text : digest.toolCalls.length > 0 || finish === 'content_filter' ? null : '',
    };
    if (digest.toolCalls.length > 0) message.tool_calls = digest.toolCalls;
    if (!target.strict && digest.thinking) {
      const blocks: ContentBlock[] = [{ type: 'thinking', text: digest.thinking }, ...(digest.hasText ? [{ type: 'text' as const, text: digest.text }] : [])];
      message.content_blocks = blocks;
    }
    return { index, message, finish_reason: finish, logprobs: null };
  });
  if (choices.length === 0) {
    // The prompt itself was blocked: no candidates, only promptFeedback.blockReason.
    choices.push({ index: 0, message: { role: 'assistant', content: null }, finish_reason: isRecord(response.promptFeedback) && response.promptFeedback.blockReason ? 'content_filter' : 'stop', logprobs: null });
  }
  return {
    id: chatId(typeof response.responseId === 'string' ? response.responseId : undefined),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof response.modelVersion === 'string' && response.modelVersion ? response.modelVersion : request.model,
    choices,
    usage: mapGeminiUsage(isRecord(response.usageMetadata) ? response.usageMetadata : undefined),
  };
}
