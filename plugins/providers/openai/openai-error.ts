import { mapCompatibleError } from '../openai-compatible/index.js';

/**
 * OpenAI error bodies are already `{"error": {message, type, param, code}}`; anything else (an HTML
 * page from a proxy, an empty body) gets a message naming the status and a type chosen by status.
 */
export const mapOpenAIError = mapCompatibleError;
