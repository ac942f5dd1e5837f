import { isRecord, type ResponseEvent, type ResponseObject, type ResponsesAdapter, type StreamMapper, type StreamStep, type UpstreamRequest } from '../../core/spec/index.js';
import { parseEventData, streamError } from './chat-mapping.js';

/** The Responses stream's terminal events: the upstream's answer is complete after one of them. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** The events of a Responses API stream as the core reads them; an `error` event ends the stream with that error. */
export function responsesEventMapper(): StreamMapper<ResponseEvent> {
  return {
    map(event): StreamStep<ResponseEvent> {
      if (event.data === '[DONE]') return {};
      const data = parseEventData(event.data);
      if (!data || typeof data.type !== 'string') return { error: streamError('The provider sent a stream event that is not a Responses event.', 'malformed_stream') };
      if (data.type === 'error') {
        const error = isRecord(data.error) ? data.error : data;
        return { error: streamError(String(error.message ?? 'The provider reported an error in the stream.'), String(error.code ?? 'stream_error'), 'api_error') };
      }
      return TERMINAL.has(data.type) ? { chunks: [data as ResponseEvent], done: true } : { chunks: [data as ResponseEvent] };
    },
  };
}

/** A Responses answer checked for the fields the gateway reads (a body of another shape is the provider's fault). */
export function responseObjectOf(body: unknown): ResponseObject {
  if (!isRecord(body) || body.object !== 'response' || typeof body.id !== 'string' || !Array.isArray(body.output)) throw new TypeError('Responses answer without id, object "response" and output');
  return body as ResponseObject;
}

/**
 * A native Responses adapter for an OpenAI-shaped API: the body goes up as received when the
 * gateway changed nothing (or re-serialised), the answer and events come back as they are.
 */
export function nativeResponsesAdapter(options: {
  readonly url: (target: Parameters<ResponsesAdapter['toUpstream']>[1]) => string;
  readonly builtInTools: readonly string[];
  /** Adjusts the body (Azure names the deployment as the model); the client's bytes are not used then. */
  readonly body?: (request: Parameters<ResponsesAdapter['toUpstream']>[0], target: Parameters<ResponsesAdapter['toUpstream']>[1]) => Record<string, unknown> | undefined;
}): ResponsesAdapter {
  return {
    builtInTools: options.builtInTools,
    toUpstream(request, target, original): UpstreamRequest {
      const adjusted = options.body?.(request, target);
      const body = adjusted ? JSON.stringify(adjusted) : (original ?? JSON.stringify(request));
      return { method: 'POST', url: options.url(target), headers: { 'content-type': 'application/json' }, body };
    },
    fromUpstream: (body) => responseObjectOf(body),
    stream: { createMapper: () => responsesEventMapper() },
  };
}
