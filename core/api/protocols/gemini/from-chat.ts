import type { GeminiCandidate, GeminiPart, GeminiRequest, GeminiResponse } from '../../../spec/gemini.js';
import { geminiUsageMetadata } from '../../../spec/gemini.js';
import { isRecord } from '../../../spec/is-record.js';
import { toolInput } from '../../../spec/tool-input.js';
import type { ChatResponse } from '../../../spec/unified.js';

const FINISH_REASONS: Readonly<Record<string, string>> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  tool_calls: 'STOP',
  function_call: 'STOP',
  content_filter: 'SAFETY',
};

/** A unified `finish_reason` as Gemini's `finishReason` (a stop after function calls is `STOP`, as Gemini reports it). */
export const finishReasonOf = (finishReason: string | null | undefined): string => FINISH_REASONS[finishReason ?? 'stop'] ?? 'OTHER';

/** A response id for a unified answer's id. */
export const responseIdOf = (id: string | undefined): string => (id ? id.replace(/^chatcmpl-/, '') : Date.now().toString(36));

/**
 * Thought parts of a unified answer: the gateway's `content_blocks` (a thinking block's signature as
 * the part's `thoughtSignature`), else the `reasoning_content` / `reasoning` text compatible servers send.
 */
export function thoughtParts(message: Record<string, unknown>): GeminiPart[] {
  if (Array.isArray(message.content_blocks)) {
    const parts: GeminiPart[] = [];
    for (const block of message.content_blocks as unknown[]) {
      if (!isRecord(block) || block.type !== 'thinking' || typeof block.text !== 'string' || block.text === '') continue;
      parts.push({ text: block.text, thought: true, ...(typeof block.signature === 'string' && block.signature ? { thoughtSignature: block.signature } : {}) });
    }
    return parts;
  }
  const reasoning = message.reasoning_content ?? message.reasoning;
  return typeof reasoning === 'string' && reasoning ? [{ text: reasoning, thought: true }] : [];
}

/** A function call as Gemini's part: its arguments as an object, the provider's call id kept (a client sends it back with the response). */
export const functionCallPart = (call: { id?: string; function?: { name?: string; arguments?: string } }): GeminiPart => ({
  functionCall: { ...(call.id ? { id: call.id } : {}), name: call.function?.name ?? '', args: toolInput(call.function?.arguments ?? '{}') as Record<string, unknown> },
});

/** Whether the request asked for thought parts (`thinkingConfig.includeThoughts`); Gemini sends none otherwise. */
export const includesThoughts = (request: GeminiRequest): boolean => isRecord(request.generationConfig?.thinkingConfig) && request.generationConfig.thinkingConfig.includeThoughts === true;

/**
 * A unified chat answer as a `GenerateContentResponse`: one candidate per choice, thoughts first
 * (when `thoughts`: the request asked for them), then the text, then the function calls. An answer
 * denied by an output guardrail (`content_filter`) is a candidate with no parts and
 * `finishReason: "SAFETY"`.
 */
export function geminiResponseFromChat(response: ChatResponse, model: string, thoughts = true): GeminiResponse {
  const candidates: GeminiCandidate[] = response.choices.map((choice) => {
    const parts: GeminiPart[] = [];
    if (choice.finish_reason !== 'content_filter') {
      const message = choice.message as unknown as Record<string, unknown>;
      if (thoughts) parts.push(...thoughtParts(message));
      if (typeof choice.message.content === 'string' && choice.message.content !== '') parts.push({ text: choice.message.content });
      for (const call of choice.message.tool_calls ?? []) parts.push(functionCallPart(call));
    }
    return { content: { role: 'model', parts }, finishReason: finishReasonOf(choice.finish_reason), index: choice.index };
  });
  return { candidates, usageMetadata: geminiUsageMetadata(response.usage), modelVersion: response.model || model, responseId: responseIdOf(response.id) };
}

/** The answer Google gives a blocked prompt: no candidate, `promptFeedback.blockReason`. */
export const blockedPrompt = (model: string): GeminiResponse => ({
  promptFeedback: { blockReason: 'SAFETY' },
  usageMetadata: { promptTokenCount: 0, totalTokenCount: 0 },
  modelVersion: model,
});
