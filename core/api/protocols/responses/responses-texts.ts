import type { GuardrailParameters } from '../../../spec/guardrail.js';
import { isRecord } from '../../../spec/is-record.js';
import type { ContentPart, ResponseItem, ResponsesRequest } from '../../../spec/responses.js';

/** Where a judged text lives: the instructions, the string input, an item's string content or output, or one text part. */
type Slot = { readonly field: 'instructions' | 'input' } | { readonly item: number; readonly key: 'content' | 'output' | 'arguments' | 'input'; readonly part?: number };

const TEXT_PARTS = new Set(['input_text', 'output_text']);

/**
 * The texts input guardrails judge in a Responses request, in order: the instructions, then the
 * input (a string, or the text of each message and of each tool output, and the arguments of each
 * function call the client sends back, so that values restored to it there are masked again). Items
 * of the conversation named by `previous_response_id` were judged when they were sent.
 */
export function responsesTexts(request: ResponsesRequest): { texts: string[]; slots: Slot[] } {
  const texts: string[] = [];
  const slots: Slot[] = [];
  if (typeof request.instructions === 'string' && request.instructions) {
    texts.push(request.instructions);
    slots.push({ field: 'instructions' });
  }
  if (typeof request.input === 'string') {
    texts.push(request.input);
    slots.push({ field: 'input' });
  } else {
    (request.input ?? []).forEach((item, index) => {
      // A function call's arguments (JSON text), a custom tool call's input (free text).
      const call = item.type === 'function_call' ? 'arguments' : item.type === 'custom_tool_call' ? 'input' : undefined;
      if (call !== undefined) {
        if (typeof item[call] === 'string' && item[call] !== '') {
          texts.push(item[call] as string);
          slots.push({ item: index, key: call });
        }
        return;
      }
      const key = item.type === 'function_call_output' || item.type === 'custom_tool_call_output' ? 'output' : 'content';
      const value = item[key];
      if (typeof value === 'string') {
        texts.push(value);
        slots.push({ item: index, key });
      } else if (Array.isArray(value)) {
        value.forEach((part: unknown, partIndex) => {
          if (isRecord(part) && TEXT_PARTS.has(String(part.type)) && typeof part.text === 'string') {
            texts.push(part.text);
            slots.push({ item: index, key, part: partIndex });
          }
        });
      }
    });
  }
  return { texts, slots };
}

export const responsesParameters = (request: ResponsesRequest): GuardrailParameters =>
  typeof request.max_output_tokens === 'number' ? { maxTokens: request.max_output_tokens } : {};

/** A copy of the request with the judged texts and parameters rewritten (a guardrail's transform). */
export function rewriteResponsesRequest(request: ResponsesRequest, slots: readonly Slot[], texts: readonly string[], parameters: GuardrailParameters): ResponsesRequest {
  const rewritten: ResponsesRequest = { ...request };
  const items: ResponseItem[] | undefined = Array.isArray(request.input) ? request.input.map((item) => ({ ...item })) : undefined;
  slots.forEach((slot, index) => {
    if ('field' in slot) {
      rewritten[slot.field] = texts[index];
      return;
    }
    const item = items![slot.item];
    if (slot.part === undefined) item[slot.key] = texts[index];
    else {
      const parts = [...(item[slot.key] as ContentPart[])];
      parts[slot.part] = { ...parts[slot.part], text: texts[index] };
      item[slot.key] = parts;
    }
  });
  if (items) rewritten.input = items;
  if (parameters.maxTokens !== undefined) rewritten.max_output_tokens = parameters.maxTokens;
  return rewritten;
}
