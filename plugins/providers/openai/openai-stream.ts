import type { ChatStreamMapper } from '../../../core/spec/index.js';
import { createCompatibleStreamMapper } from '../openai-compatible/index.js';

/** OpenAI streams are already unified chunks; `[DONE]` ends them; an `error` event is mapped. */
export const createOpenAIStreamMapper = (): ChatStreamMapper => createCompatibleStreamMapper();
