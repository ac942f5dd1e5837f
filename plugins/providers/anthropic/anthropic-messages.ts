import { isRecord, type MessagesAdapter, type MessagesResponse, type MessagesStreamEvent, type MessagesTokenCount, type ProviderTarget, type StreamMapper, type StreamStep } from '../../../core/spec/index.js';
import { MALFORMED_EVENT, parseEventData } from '../../shared/chat-mapping.js';
import { anthropicErrorBody } from './anthropic-error.js';

/** Client headers of the Messages API that travel with a native request: the version asked for, and beta features. */
export function anthropicHeaders(target: ProviderTarget): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const name of ['anthropic-version', 'anthropic-beta']) {
    const value = target.headers[name];
    if (value) headers[name] = value;
  }
  return headers;
}

/** A Message as received; one without `content` is no Message (502). */
export function messageOf(body: unknown): MessagesResponse {
  if (!isRecord(body) || !Array.isArray(body.content)) throw new TypeError('Messages answer without content');
  return body as MessagesResponse;
}

/** A token count as received. */
export function tokenCountOf(body: unknown): MessagesTokenCount {
  if (!isRecord(body) || typeof body.input_tokens !== 'number') throw new TypeError('count_tokens answer without input_tokens');
  return body as MessagesTokenCount;
}

/**
 * One Messages stream event (its JSON) as a native step: every event is relayed as it is,
 * `message_stop` ends the stream, an `error` event ends it with that error.
 */
export function messagesEventStep(data: Record<string, unknown> | undefined): StreamStep<MessagesStreamEvent> {
  if (!data || typeof data.type !== 'string') return { error: MALFORMED_EVENT };
  if (data.type === 'error') return { error: anthropicErrorBody(isRecord(data.error) ? data.error : {}, 500) };
  const event = data as MessagesStreamEvent;
  return data.type === 'message_stop' ? { chunks: [event], done: true } : { chunks: [event] };
}

/** The Messages API's own SSE stream, mapped event by event. */
export const createMessagesStreamMapper = (): StreamMapper<MessagesStreamEvent> => ({
  map: (event) => messagesEventStep(parseEventData(event.data)),
});

/** Anthropic's Messages API, natively: the client's body is sent as received, with its version and beta headers. */
export const anthropicMessages: MessagesAdapter = {
  toUpstream(request, target, original) {
    return { method: 'POST', url: `${target.baseUrl}/messages`, headers: anthropicHeaders(target), body: original ?? JSON.stringify(request) };
  },
  fromUpstream: messageOf,
  stream: { createMapper: createMessagesStreamMapper },
  countTokens: {
    toUpstream(request, target, original) {
      return { method: 'POST', url: `${target.baseUrl}/messages/count_tokens`, headers: anthropicHeaders(target), body: original ?? JSON.stringify(request) };
    },
    fromUpstream: tokenCountOf,
  },
};
