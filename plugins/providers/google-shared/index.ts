export { GOOGLE_CONTENT_PARTS, toGeminiBody, textOf } from './google-chat-request.js';
export { fromGeminiResponse } from './google-chat-response.js';
export { createGeminiStreamMapper } from './google-stream.js';
export { mapGoogleError } from './google-error.js';
export { checkTextInput, textInputs, encodeEmbedding } from './google-embedding.js';
export { googleCatalogueModelName } from './google-pricing.js';
export { googleBody, googleGenerateContent, nativeStreamMapper } from './google-native.js';
