import type { ResponseItem, ResponseObject } from '../../../spec/responses.js';
import type { ChatResponse } from '../../../spec/unified.js';
import { callItem, messageItem, newId, reasoningItem, responseUsage, statusOf } from './responses-objects.js';
import type { ReasoningBlock } from './responses-reasoning.js';
import type { ToolName } from './responses-to-chat.js';

/** The reasoning blocks of a chat message's `content_blocks` (present when the provider reasons). */
export function reasoningBlocksOf(blocks: unknown): ReasoningBlock[] {
  if (!Array.isArray(blocks)) return [];
  return blocks.flatMap((block): ReasoningBlock[] => {
    if (block?.type === 'thinking') return [{ type: 'thinking', text: String(block.text ?? ''), ...(block.signature ? { signature: String(block.signature) } : {}) }];
    if (block?.type === 'redacted_thinking' && typeof block.data === 'string') return [{ type: 'redacted_thinking', data: block.data }];
    return [];
  });
}

/**
 * A plain chat answer (its first choice) as the Response: reasoning, then the message, then the
 * tool calls, each an output item; status from the finish reason; usage in the Responses shape.
 */
export function responseFromChat(shell: ResponseObject, answer: ChatResponse, tools: ReadonlyMap<string, ToolName>, provider: string): ResponseObject {
  const choice = answer.choices[0];
  const output: ResponseItem[] = [];
  const reasoning = reasoningBlocksOf(choice?.message.content_blocks);
  if (reasoning.length > 0) output.push(reasoningItem(newId('rs'), provider, reasoning));
  const text = choice?.message.content;
  if (typeof text === 'string' && (text !== '' || !choice?.message.tool_calls?.length)) output.push(messageItem(newId('msg'), text, 'completed'));
  for (const call of choice?.message.tool_calls ?? []) output.push(callItem(newId('fc'), { id: call.id, name: call.function.name, arguments: call.function.arguments }, tools));
  return {
    ...shell,
    ...statusOf(choice?.finish_reason),
    model: answer.model || shell.model,
    output,
    usage: answer.usage ? responseUsage(answer.usage) : null,
  };
}
