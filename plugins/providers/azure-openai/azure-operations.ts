import {
  type CompletionAdapter,
  type CompletionResponse,
  type EmbedAdapter,
  type EmbeddingResponse,
  encodeMultipart,
  type ImageGenerateAdapter,
  type ImageResponse,
  type ModelList,
  type ModelsAdapter,
  type MultipartAdapter,
  type SpeechAdapter,
  type StreamStep,
} from '../../../core/spec/index.js';
import { parseEventData, streamError } from '../../shared/chat-mapping.js';
import { apiVersion, deploymentUrl } from './azure-target.js';

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

/** A multipart operation on a deployment (transcription, translation, image edits): the form re-encoded as received. */
function azureMultipart<Response>(version: string, operation: string, fromUpstream?: (body: unknown) => Response): MultipartAdapter<Response> {
  return {
    toUpstream(form, target) {
      const { body, headers } = encodeMultipart(form);
      return { method: 'POST', url: deploymentUrl(target, operation, version), headers, body };
    },
    ...(fromUpstream ? { fromUpstream } : {}),
  };
}

/** Transcription and translation answers (JSON, text, SRT, VTT) are relayed as Azure sent them. */
export const azureTranscription = (version: string): MultipartAdapter<unknown> => azureMultipart(version, 'audio/transcriptions');
export const azureTranslation = (version: string): MultipartAdapter<unknown> => azureMultipart(version, 'audio/translations');
export const azureImageEdit = (version: string): MultipartAdapter<ImageResponse> =>
  azureMultipart(version, 'images/edits', (body) => expectObject<ImageResponse>(body, 'data', 'image edit'));

/** `GET /v1/models`: the models the resource can deploy (`GET /openai/models`), in OpenAI's list shape. */
export function azureModels(version: string): ModelsAdapter {
  return {
    toUpstream: (target) => ({ method: 'GET', url: `${target.baseUrl}/models?api-version=${encodeURIComponent(apiVersion(target, version))}`, headers: {} }),
    fromUpstream(body): ModelList {
      const data = expectObject<{ data: unknown }>(body, 'data', 'models').data;
      if (!Array.isArray(data)) throw new TypeError('Azure models response without a data list');
      return {
        object: 'list',
        data: (data as Array<Record<string, unknown>>).map((model) => ({
          id: String(model.id),
          object: 'model',
          created: typeof model.created_at === 'number' ? model.created_at : 0,
          owned_by: typeof model.owned_by === 'string' ? model.owned_by : 'azure-openai',
        })),
      };
    },
  };
}
