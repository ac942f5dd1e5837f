// The provider toolkit: the provider contract and everything a provider plugin needs from the core,
// for provider authors (published as `llm-gateway/provider`). Provider code imports only this module
// or `core/spec` (its index, which re-exports it), and `plugins/shared`; lint enforces it.

/** The contract: the plugin, its operations and adapters, stream decoding and mapping. */
export * from '../provider.js';
/** Batches translated for a provider's own batch API (`operations.batches`). */
export * from '../batches.js';
/** A credential exchanged for a token before use (`credentialExchange`). */
export * from '../credential-exchange.js';
/** The plugin manifest and the dependencies `create` receives (logger, clock). */
export * from '../manifest.js';
/** The unified (OpenAI-shaped) API an adapter maps from and to, and the other protocols' shapes. */
export * from '../unified.js';
export * from '../content-parts.js';
export * from '../messages.js';
export * from '../responses.js';
export * from '../gemini.js';
export { unifiedMessagesUsage, messagesUsage } from '../messages-usage.js';
/** The conformance kit's contract, and helpers for writing a fake's renderer. */
export * from '../conformance.js';
export * from '../fake-render.js';
export * from '../is-record.js';
export { toolInput } from '../tool-input.js';

/** Errors: the one catalogue (`errors.invalidRequest(message, { param, code })` refuses a request) and the status-to-type table. */
export { ERROR_TYPE_BY_STATUS, errors, errorTypeForStatus, GatewayError } from '../../errors.js';
/** Multipart: re-encodes a spooled form upstream, files byte for byte; one file as a raw body. */
export { encodeMultipart, fileBody } from '../../http/multipart.js';
/** Server-sent events: the decoder, one event's framing, the end marker. */
export { SSE_DONE, SseDecoder, sseData } from '../../http/sse.js';

/** Newline-delimited JSON streams. */
export { NdjsonDecoder } from './ndjson.js';
/** Streamed answers: one chunk builder per answer, usage from a provider's counts. */
export { chatChunks, tokenUsage, type ChatChunkBuilder } from './chunks.js';
/** Rerank: the documents' texts, in order. */
export { rerankDocumentTexts } from './rerank.js';
/** The chat mapping helpers native-API providers share. */
export * from './chat-mapping.js';
