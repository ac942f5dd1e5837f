export { cleanGeminiSchema, geminiParameters } from './google-schema.js';
export { toGeminiBody, textOf, type GeminiRequestBody, type GeminiContent, type GeminiPart } from './google-chat-request.js';
export { fromGeminiResponse, mapGeminiUsage, mapGeminiFinishReason, type GeminiResponseBody } from './google-chat-response.js';
export { createGeminiStreamMapper } from './google-stream.js';
export { mapGoogleError, googleErrorBody } from './google-error.js';
export { checkTextInput, textInputs, encodeEmbedding } from './google-embedding.js';
export { rejectProblem } from './google-problem.js';
