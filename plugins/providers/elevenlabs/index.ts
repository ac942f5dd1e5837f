import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { mapElevenLabsError } from './elevenlabs-error.js';
import { elevenLabsSpeech } from './elevenlabs-speech.js';

export interface ElevenLabsParams {
  /** Default base URL (default `https://api.elevenlabs.io/v1`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
}

/** ElevenLabs: text to speech behind `POST /v1/audio/speech`, the key in `xi-api-key`. */
export function elevenlabs(params: ElevenLabsParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'elevenlabs',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'ElevenLabs: text to speech (POST /v1/audio/speech → /v1/text-to-speech/<voice id>), audio relayed as it arrives.',
      params: { type: 'object', additionalProperties: false, properties: { baseUrl: { type: 'string', pattern: '^https?://' } } },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['elevenlabs'] },
    create() {
      const baseUrl = (params.baseUrl ?? 'https://api.elevenlabs.io/v1').replace(/\/+$/, '');
      return {
        id: 'elevenlabs',
        name: 'ElevenLabs',
        operations: { speech: elevenLabsSpeech },
        baseUrl: () => baseUrl,
        auth(_request, target) {
          if (!target.credentials.apiKey) throw errors.authentication('ElevenLabs needs "Authorization: Bearer <ElevenLabs API key>" (sent as xi-api-key).', { code: 'missing_provider_credentials' });
          return { 'xi-api-key': target.credentials.apiKey };
        },
        authHeaders: ['xi-api-key', 'authorization'],
        mapError: mapElevenLabsError,
      };
    },
  };
}
