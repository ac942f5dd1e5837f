import type { ChatCompletionChunk, StreamMapper } from '../../../core/spec/index.js';
import { createCompatibleStreamMapper } from '../openai-compatible/index.js';

/** OpenAI streams (chat and text completions) are already unified chunks; `[DONE]` ends them; an `error` event is mapped. */
export const createOpenAIStreamMapper = <Chunk = ChatCompletionChunk>(): StreamMapper<Chunk> => createCompatibleStreamMapper<Chunk>();
