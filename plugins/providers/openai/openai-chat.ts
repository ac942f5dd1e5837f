import type { ChatAdapter } from '../../../core/spec/index.js';
import { compatibleChatAdapter } from '../openai-compatible/index.js';

/**
 * OpenAI chat: the unified API is OpenAI's own, so the request goes up as sent, byte for byte
 * (unknown fields included), except that streams always ask for usage, which the gateway needs for its log; the
 * gateway drops the usage chunk again when the client did not ask for it. OpenAI is the
 * compatible base with no quirks.
 */
export const openAIChat: ChatAdapter = compatibleChatAdapter({ provider: 'openai' });
