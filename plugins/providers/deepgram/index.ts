import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { mapDeepgramError } from './deepgram-error.js';
import { deepgramTranscription } from './deepgram-transcription.js';

export interface DeepgramParams {
  /** Default base URL (default `https://api.deepgram.com/v1`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
}

/** Deepgram: pre-recorded transcription behind `POST /v1/audio/transcriptions`, the key as `Authorization: Token`. */
export function deepgram(params: DeepgramParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'deepgram',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'Deepgram: transcription of pre-recorded audio (POST /v1/audio/transcriptions → /v1/listen), json and verbose_json answers.',
      params: { type: 'object', additionalProperties: false, properties: { baseUrl: { type: 'string', pattern: '^https?://' } } },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['deepgram'] },
    create() {
      const baseUrl = (params.baseUrl ?? 'https://api.deepgram.com/v1').replace(/\/+$/, '');
      return {
        id: 'deepgram',
        name: 'Deepgram',
        operations: { transcription: deepgramTranscription },
        baseUrl: () => baseUrl,
        auth(_request, target) {
          if (!target.credentials.apiKey) throw errors.authentication('Deepgram needs "Authorization: Bearer <Deepgram API key>" (sent as "Token <key>").', { code: 'missing_provider_credentials' });
          return { authorization: `Token ${target.credentials.apiKey}` };
        },
        authHeaders: ['authorization'],
        mapError: mapDeepgramError,
      };
    },
  };
}
