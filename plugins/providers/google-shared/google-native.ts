import {
  type GeminiRequest,
  type GeminiResponse,
  type GeminiTokenCount,
  type GenerateContentAdapter,
  isRecord,
  MALFORMED_EVENT,
  type ProviderTarget,
  type StreamMapper,
  type StreamStep,
  type UpstreamRequest,
} from '../../../core/spec/index.js';
import { googleErrorBody } from './google-error.js';

/** The body Google takes: the client's, without the gateway's own `model` and `stream` fields. */
export function googleBody(request: GeminiRequest): Record<string, unknown> {
  const { model: _model, stream: _stream, ...body } = request;
  return body;
}

/**
 * Maps `streamGenerateContent?alt=sse` events to the pieces they are; an error event ends the stream
 * with Google's error. Gemini has no end marker: the stream is complete once every candidate asked
 * for (`candidateCount`) has its `finishReason`, or the prompt was blocked.
 */
export function nativeStreamMapper(request: GeminiRequest): StreamMapper<GeminiResponse> {
  const count = request.generationConfig?.candidateCount;
  const expected = typeof count === 'number' && count > 1 ? count : 1;
  const finished = new Set<number>();
  return {
    map(event): StreamStep<GeminiResponse> {
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        return { error: MALFORMED_EVENT };
      }
      const value: unknown = Array.isArray(parsed) ? parsed[0] : parsed;
      if (!isRecord(value)) return {};
      if (isRecord(value.error)) return { error: googleErrorBody(value.error, 500) };
      const response = value as GeminiResponse;
      (Array.isArray(response.candidates) ? response.candidates : []).forEach((candidate, position) => {
        if (isRecord(candidate) && typeof candidate.finishReason === 'string') finished.add(typeof candidate.index === 'number' ? candidate.index : position);
      });
      const blocked = isRecord(response.promptFeedback) && Boolean(response.promptFeedback.blockReason);
      return { chunks: [response], ...(blocked || finished.size >= expected ? { done: true } : {}) };
    },
  };
}

const asResponse = (body: unknown): GeminiResponse => {
  if (!isRecord(body)) throw new TypeError('Gemini response is not an object');
  return body as GeminiResponse;
};

const asCount = (body: unknown): GeminiTokenCount => {
  if (!isRecord(body) || typeof body.totalTokens !== 'number') throw new TypeError('countTokens answer without totalTokens');
  return body as GeminiTokenCount;
};

/**
 * The Gemini API natively, for a Google provider: `url(target, model, method)` is the model's method
 * URL (AI Studio's `…/models/{model}:{method}`, Vertex AI's publisher path); `headers(target)` the
 * JSON headers. `accepts`: the models it serves natively (Vertex AI: Google's, not Claude).
 */
export function googleGenerateContent(options: {
  url(target: ProviderTarget, model: string, method: string): string;
  headers(target: ProviderTarget): Record<string, string>;
  accepts?(model: string): boolean;
  /** countTokens' body for the model (AI Studio wants the model named inside `generateContentRequest`). */
  countBody?(request: GeminiRequest): unknown;
}): GenerateContentAdapter {
  const post = (target: ProviderTarget, model: string, method: string, body: unknown): UpstreamRequest => ({
    method: 'POST',
    url: options.url(target, model, method),
    headers: options.headers(target),
    body: JSON.stringify(body),
  });
  return {
    ...(options.accepts ? { accepts: options.accepts } : {}),
    toUpstream: (request, target) => post(target, request.model, request.stream ? 'streamGenerateContent?alt=sse' : 'generateContent', googleBody(request)),
    fromUpstream: asResponse,
    stream: { createMapper: (request) => nativeStreamMapper(request) },
    countTokens: {
      toUpstream: (request, target) => post(target, request.model, 'countTokens', options.countBody?.(request) ?? { contents: request.contents }),
      fromUpstream: asCount,
    },
  };
}
