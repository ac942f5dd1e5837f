import type { GuardrailParameters } from '../spec/guardrail.js';
import type { ChatMessage, ChatRequest } from '../spec/unified.js';

/** Where a judged text lives in a chat request: a message's string content, one text part, or one tool call's arguments. */
type Slot = { readonly message: number; readonly part?: number; readonly call?: number };

/**
 * The texts of a chat request's messages, in order, with where each came from: contents, text parts,
 * and the arguments (JSON text) of the tool calls an assistant message carries back, so that a value
 * restored to the client in a tool call's arguments is masked again when the conversation goes back up.
 */
export function requestTexts(request: ChatRequest): { texts: string[]; slots: Slot[] } {
  const texts: string[] = [];
  const slots: Slot[] = [];
  request.messages.forEach((message, index) => {
    if (typeof message.content === 'string') {
      texts.push(message.content);
      slots.push({ message: index });
    } else if (Array.isArray(message.content)) {
      message.content.forEach((part: unknown, partIndex) => {
        const text = (part as { type?: unknown; text?: unknown } | null)?.type === 'text' ? (part as { text?: unknown }).text : undefined;
        if (typeof text === 'string') {
          texts.push(text);
          slots.push({ message: index, part: partIndex });
        }
      });
    }
    message.tool_calls?.forEach((call, callIndex) => {
      const args = call?.function?.arguments;
      if (typeof args === 'string' && args !== '') {
        texts.push(args);
        slots.push({ message: index, call: callIndex });
      }
    });
  });
  return { texts, slots };
}

export function requestParameters(request: ChatRequest): GuardrailParameters {
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  return typeof maxTokens === 'number' ? { maxTokens } : {};
}

/**
 * A copy of the request with rewritten texts and parameters. A token cap is written to the field
 * the client used; when it used neither, to `max_tokens`, which every OpenAI-compatible server reads.
 */
export function rewriteRequest(request: ChatRequest, slots: readonly Slot[], texts: readonly string[], parameters: GuardrailParameters): ChatRequest {
  const messages: ChatMessage[] = request.messages.map((message) => (Array.isArray(message.content) ? { ...message, content: [...message.content] } : { ...message }));
  slots.forEach((slot, index) => {
    const message = messages[slot.message];
    if (slot.call !== undefined) {
      if (texts[index] === request.messages[slot.message].tool_calls![slot.call].function.arguments) return;
      const calls = [...message.tool_calls!];
      calls[slot.call] = { ...calls[slot.call], function: { ...calls[slot.call].function, arguments: texts[index] } };
      message.tool_calls = calls;
    } else if (slot.part === undefined) message.content = texts[index];
    else (message.content as unknown[])[slot.part] = { ...(message.content as Record<string, unknown>[])[slot.part], text: texts[index] };
  });
  const rewritten: ChatRequest = { ...request, messages };
  if (parameters.maxTokens !== undefined) {
    if (request.max_completion_tokens !== undefined && request.max_completion_tokens !== null) rewritten.max_completion_tokens = parameters.maxTokens;
    else rewritten.max_tokens = parameters.maxTokens;
  }
  return rewritten;
}
