import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { replicateChat } from './replicate-chat.js';
import { mapReplicateError } from './replicate-error.js';

export interface ReplicateParams {
  /** Default base URL (default `https://api.replicate.com/v1`); `x-gateway-custom-host` overrides it per request. */
  baseUrl?: string;
}

/**
 * Replicate: chat on its language models through the predictions API (`Prefer: wait`), an official
 * model by `owner/name` or any model version by `owner/name:<version>`; the API token as Bearer.
 */
export function replicate(params: ReplicateParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'replicate',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'Replicate: chat on language models through predictions (POST /v1/models/{owner}/{name}/predictions with Prefer: wait, or /v1/predictions with a version).',
      params: { type: 'object', additionalProperties: false, properties: { baseUrl: { type: 'string', pattern: '^https?://' } } },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['replicate'] },
    create(dependencies) {
      const baseUrl = (params.baseUrl ?? 'https://api.replicate.com/v1').replace(/\/+$/, '');
      return {
        id: 'replicate',
        name: 'Replicate',
        operations: { chat: replicateChat(dependencies.clock) },
        capabilities: { developerRole: () => false },
        baseUrl: () => baseUrl,
        auth(_request, target): Record<string, string> {
          if (!target.credentials.apiKey) throw errors.authentication('Replicate needs "Authorization: Bearer <Replicate API token>".', { code: 'missing_provider_credentials' });
          return { authorization: `Bearer ${target.credentials.apiKey}` };
        },
        authHeaders: ['authorization'],
        mapError: mapReplicateError,
      };
    },
  };
}
