import type { GuardrailParameters } from '../../../spec/guardrail.js';
import type { MessagesBlock, MessagesRequest } from '../../../spec/messages.js';
import { isRecord } from '../../../spec/is-record.js';
import { jsonLeaves, setLeaf } from '../../../guardrails/json-leaves.js';

/**
 * Where the input guardrails' texts are in a Messages request: the system prompt, every message's
 * string content and text blocks, the text of tool results and plain-text documents, and the strings
 * of the tool calls' input an assistant turn carries back. Each text
 * comes with a setter that writes a rewritten one back into a copy of the request.
 */
type Setter = (request: MessagesRequest, text: string) => void;

interface Slot {
  readonly text: string;
  readonly set: Setter;
}

/** A copy of the request whose messages and blocks may be changed in place (the client's body stays as received). */
const copyOf = (request: MessagesRequest): MessagesRequest => structuredClone(request);

function blockSlots(blocks: readonly MessagesBlock[], locate: (request: MessagesRequest) => MessagesBlock[], slots: Slot[]): void {
  blocks.forEach((block, index) => {
    if (block.type === 'text' && typeof block.text === 'string') {
      slots.push({ text: block.text, set: (request, text) => void (locate(request)[index].text = text) });
    } else if (block.type === 'tool_use' && isRecord(block.input)) {
      // The input of a tool call the client sends back: each string in it.
      for (const leaf of jsonLeaves(block.input)) slots.push({ text: leaf.text, set: (request, text) => setLeaf(locate(request)[index].input, leaf.path, text) });
    } else if (block.type === 'tool_result') {
      contentSlots(block.content, (request) => locate(request)[index], slots);
    } else if (block.type === 'document' && isRecord(block.source) && block.source.type === 'text' && typeof block.source.data === 'string') {
      slots.push({ text: block.source.data, set: (request, text) => void ((locate(request)[index].source as Record<string, unknown>).data = text) });
    }
  });
}

/** The texts of `owner.content` (a string or blocks), where `owner` is found again in a copy by `locate`. */
function contentSlots(content: unknown, locate: (request: MessagesRequest) => { content?: unknown } | MessagesBlock, slots: Slot[]): void {
  if (typeof content === 'string') slots.push({ text: content, set: (request, text) => void (locate(request).content = text) });
  else if (Array.isArray(content)) blockSlots(content as MessagesBlock[], (request) => locate(request).content as MessagesBlock[], slots);
}

function slotsOf(request: MessagesRequest): Slot[] {
  const slots: Slot[] = [];
  if (typeof request.system === 'string') slots.push({ text: request.system, set: (copy, text) => void (copy.system = text) });
  else if (Array.isArray(request.system)) blockSlots(request.system, (copy) => copy.system as MessagesBlock[], slots);
  request.messages.forEach((message, index) => contentSlots(message.content, (copy) => copy.messages[index], slots));
  return slots;
}

/** The texts input guardrails judge, the request's token cap, and how to write their verdict back. */
export function messagesJudgedRequest(request: MessagesRequest): {
  texts: string[];
  parameters: GuardrailParameters;
  rewrite: (texts: readonly string[], parameters: GuardrailParameters) => MessagesRequest;
} {
  const slots = slotsOf(request);
  return {
    texts: slots.map((slot) => slot.text),
    parameters: typeof request.max_tokens === 'number' ? { maxTokens: request.max_tokens } : {},
    rewrite(texts, parameters) {
      const copy = copyOf(request);
      slots.forEach((slot, index) => {
        if (texts[index] !== slot.text) slot.set(copy, texts[index]);
      });
      if (parameters.maxTokens !== undefined) copy.max_tokens = parameters.maxTokens;
      return copy;
    },
  };
}
