import type { EmbedAdapter } from '../../../core/spec/index.js';
import { compatibleEmbedAdapter } from '../openai-compatible/index.js';

/** OpenAI embeddings: the compatible base with no quirks (identity; base64 vectors stay strings). */
export const openAIEmbed: EmbedAdapter = compatibleEmbedAdapter({ provider: 'openai' });
