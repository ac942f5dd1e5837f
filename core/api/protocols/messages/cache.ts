import { type CacheableOperation, withoutDefaults } from '../../../cache/cacheable.js';
import { isRecord } from '../../../spec/is-record.js';
import type { MessagesResponse } from '../../../spec/messages.js';
import { replayMessage } from './respond.js';
import { unifiedMessagesUsage } from '../../../spec/messages-usage.js';

/** A message's text (a string, or text blocks only); undefined when it holds anything else (images, tool calls). */
function messageText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const block of content) {
    if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string') return undefined;
    texts.push(block.text);
  }
  return texts.join('\n');
}

/**
 * The response cache's view of `POST /v1/messages`: every request is stateless, so every one is
 * cached. Identity: the body without `stream` and without `temperature: 1` (the API's default);
 * semantic lookups embed the text of `messages` (`role: text` lines; only when every message is
 * text), the rest (system, model, parameters, tools) must match exactly. The answer stored is the
 * Message the client gets, before output guardrails (native, or translated from chat), complete
 * and not a refusal; a hit is judged again, and served as JSON or as Messages stream events.
 */
export const messagesCache: CacheableOperation<MessagesResponse> = {
  identity: (body) => (isRecord(body) ? withoutDefaults(body, { temperature: 1 }) : undefined),
  semantic(identity) {
    if (!Array.isArray(identity.messages)) return undefined;
    const lines: string[] = [];
    for (const message of identity.messages) {
      const text = isRecord(message) ? messageText(message.content) : undefined;
      if (text === undefined) return undefined;
      lines.push(`${String((message as { role: unknown }).role)}: ${text}`);
    }
    const { messages: _messages, ...rest } = identity;
    return { text: lines.join('\n'), rest };
  },
  storable: (message) => Array.isArray(message.content) && typeof message.stop_reason === 'string' && message.stop_reason !== 'refusal',
  usage: (message) => ({ usage: unifiedMessagesUsage(message.usage), ...(message.model ? { model: message.model } : {}) }),
  replay: replayMessage,
};
