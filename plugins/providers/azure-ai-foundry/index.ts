import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { withUpstreamUrl } from '../../shared/upstream-url.js';
import { mapAzureError } from '../azure-openai/azure-error.js';
import { AZURE_HEADERS, isEntraToken } from '../azure-openai/azure-target.js';
import { type ChatQuirks, compatibleChatAdapter, compatibleEmbedAdapter } from '../openai-compatible/index.js';
import { FOUNDRY_API_VERSION, foundryBaseUrl, withApiVersion } from './azure-ai-foundry-target.js';

export interface AzureAIFoundryParams {
  /** The resource used when a request names none in `x-gateway-cloud-a-resource-name`. */
  resource?: string;
  /** The api-version used when a request names none in `x-gateway-cloud-a-api-version` (default `2024-05-01-preview`). */
  apiVersion?: string;
}

/**
 * The Azure AI model inference API's chat body: `messages`, `model`, `max_tokens`, `temperature`,
 * `top_p`, `stop`, `seed`, penalties, `response_format`, `tools`, `tool_choice`, `stream`. Other
 * fields are refused by default (its `extra-parameters: error`), so those the gateway knows Foundry
 * lacks are refused here with a 400 naming them; usage rides on the stream unasked.
 */
export const FOUNDRY_CHAT_QUIRKS: ChatQuirks = {
  n: false,
  maxTokensOnly: true,
  streamUsage: 'always',
  unsupportedFields: ['logprobs', 'top_logprobs', 'logit_bias'],
};

/** Azure AI Foundry Models: chat and embeddings of a resource's deployments through the model inference endpoint. */
export function azureAIFoundry(params: AzureAIFoundryParams = {}): ProviderRegistration {
  const version = params.apiVersion ?? FOUNDRY_API_VERSION;
  const versioned = (url: string, target: Parameters<typeof withApiVersion>[1]) => withApiVersion(url, target, version);
  return {
    manifest: {
      id: 'azure-ai-foundry',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: "Azure AI Foundry Models: chat and embeddings on a resource's model inference endpoint (/models, the deployment name as model); api-key or Entra ID token.",
      params: {
        type: 'object',
        additionalProperties: false,
        properties: { resource: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9-]{0,62}$' }, apiVersion: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}(-preview)?$' } },
      },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['azure_ai'] },
    create() {
      return {
        id: 'azure-ai-foundry',
        name: 'Azure AI Foundry',
        operations: {
          chat: withUpstreamUrl(compatibleChatAdapter({ provider: 'azure-ai-foundry', quirks: FOUNDRY_CHAT_QUIRKS }), versioned),
          embed: withUpstreamUrl(compatibleEmbedAdapter({ provider: 'azure-ai-foundry' }), versioned),
        },
        capabilities: { developerRole: () => false },
        baseUrl: (headers) => foundryBaseUrl(headers, params.resource),
        auth(_request, target): Record<string, string> {
          const token = target.credentials.apiKey;
          if (!token) throw errors.authentication('Azure AI Foundry needs "Authorization: Bearer <api key or Entra ID token>".', { code: 'missing_provider_credentials' });
          return isEntraToken(token) ? { authorization: `Bearer ${token}` } : { 'api-key': token };
        },
        authHeaders: ['api-key', 'authorization'],
        mapError: mapAzureError,
        // A deployment is priced as the model it runs: the model-name header, else the deployment name (by default the model's).
        pricing: { catalogProvider: 'azure', modelName: (model, headers) => headers[AZURE_HEADERS.modelName] ?? model },
        modelCatalogue: { catalogProvider: 'azure' },
      };
    },
  };
}
