import type {
  CompletionAdapter,
  CompletionResponse,
  EmbedAdapter,
  EmbeddingResponse,
  ImageGenerateAdapter,
  ImageResponse,
  SpeechAdapter,
  StreamStep,
} from '../../../core/spec/index.js';
import { parseEventData, streamError } from '../../shared/chat-mapping.js';
import { deploymentUrl } from './azure-target.js';

/**
 * Azure's other deployment operations: the bodies are OpenAI's, so the client's bytes go up as
 * received (streams ask for usage, which the gateway needs for its log).
 */

const bodyOf = (request: Record<string, unknown>, original: Uint8Array | undefined, forceUsage: boolean): string | Uint8Array => {
  if (!forceUsage && original) return original;
  const options = request.stream_options as Record<string, unknown> | null | undefined;
  if (original && options?.include_usage === true) return original;
  return JSON.stringify(forceUsage ? { ...request, stream_options: { ...options, include_usage: true } } : request);
};

const expectObject = <T>(body: unknown, field: string, what: string): T => {
  if (!body || typeof body !== 'object' || !(field in body)) throw new TypeError(`Azure ${what} response without ${field}`);
  return body as T;
};

export function azureCompletion(version: string): CompletionAdapter {
  return {
    toUpstream(request, target, original) {
      const body = bodyOf(request, original, request.stream === true);
      return { method: 'POST', url: deploymentUrl(target, 'completions', version), headers: { 'content-type': 'application/json' }, body };
    },
    fromUpstream: (body) => expectObject<CompletionResponse>(body, 'choices', 'completion'),
    stream: {
      createMapper: () => ({
        map(event): StreamStep<CompletionResponse> {
          if (event.data === '[DONE]') return { done: true };
          const data = parseEventData(event.data);
          if (!data) return event.data.trim().startsWith('{') ? { error: streamError('The provider sent a stream event that is not JSON.', 'malformed_stream') } : {};
          if (data.error && typeof data.error === 'object') {
            const error = data.error as Record<string, unknown>;
            return { error: streamError(String(error.message ?? 'The provider reported an error in the stream.'), String(error.code ?? 'stream_error'), 'api_error') };
          }
          if (!Array.isArray(data.choices)) return {};
          if (data.choices.length === 0 && !data.usage) return {}; // prompt_filter_results only
          return { chunks: [data as unknown as CompletionResponse] };
        },
      }),
    },
  };
}

export function azureEmbed(version: string): EmbedAdapter {
  return {
    toUpstream(request, target, original) {
      const body = original ?? JSON.stringify(request);
      return { method: 'POST', url: deploymentUrl(target, 'embeddings', version), headers: { 'content-type': 'application/json' }, body };
    },
    fromUpstream: (body) => expectObject<EmbeddingResponse>(body, 'data', 'embeddings'),
  };
}

export function azureImageGenerate(version: string): ImageGenerateAdapter {
  return {
    toUpstream(request, target, original) {
      const body = original ?? JSON.stringify(request);
      return { method: 'POST', url: deploymentUrl(target, 'images/generations', version), headers: { 'content-type': 'application/json' }, body };
    },
    fromUpstream: (body) => expectObject<ImageResponse>(body, 'data', 'image'),
  };
}

export function azureSpeech(version: string): SpeechAdapter {
  return {
    toUpstream(request, target) {
      return { method: 'POST', url: deploymentUrl(target, 'audio/speech', version), headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) };
    },
    // Azure deployments name their own model (tts, tts-hd, gpt-4o-mini-tts).
    models: ['tts', 'tts-hd', 'gpt-4o-mini-tts'],
  };
}
