import { errors, OPENAI_CONTENT_PARTS, type ProviderRegistration } from '../../../core/spec/index.js';
import { azureChat } from './azure-chat.js';
import { mapAzureError } from './azure-error.js';
import { azureResponses } from './azure-responses.js';
import {
  azureCompletion,
  azureEmbed,
  azureImageEdit,
  azureImageGenerate,
  azureModels,
  azureSpeech,
  azureTranscription,
  azureTranslation,
} from './azure-operations.js';
import { azureRealtime } from './azure-realtime.js';
import { AZURE_HEADERS, azureBaseUrl, DEFAULT_API_VERSION, apiVersion, isEntraToken } from './azure-target.js';

export interface AzureOpenAIParams {
  /** api-version when the request sends no `x-gateway-cloud-a-api-version` (default 2024-10-21). */
  defaultApiVersion?: string;
}

/** A LiteLLM Azure deployment as this plugin's target: the resource from `api_base`'s host (else `api_base` as the custom host), the deployment and the API version in the cloud-a headers. */
function litellmDeployment(deployment: { model: string; apiBase?: string; apiVersion?: string }): { headers: Record<string, string>; customHost?: string } {
  const resource = deployment.apiBase ? /^https?:\/\/([^.]+)\.openai\.azure\.com/.exec(deployment.apiBase)?.[1] : undefined;
  const headers: Record<string, string> = { 'x-gateway-cloud-a-deployment-id': deployment.model };
  if (resource) headers['x-gateway-cloud-a-resource-name'] = resource;
  if (deployment.apiVersion) headers['x-gateway-cloud-a-api-version'] = deployment.apiVersion;
  return { headers, ...(!resource && deployment.apiBase ? { customHost: deployment.apiBase } : {}) };
}

/**
 * Azure OpenAI (the spec's cloud-a): deployments under `https://{resource}.openai.azure.com/openai`,
 * named by the `x-gateway-cloud-a-*` headers. The Bearer token goes as `api-key`, or as
 * `Authorization: Bearer` when it is a Microsoft Entra ID token (a JWT).
 */
export function azureOpenAI(params: AzureOpenAIParams = {}): ProviderRegistration {
  const version = params.defaultApiVersion ?? DEFAULT_API_VERSION;
  return {
    manifest: {
      id: 'azure-openai',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'Azure OpenAI: chat, the Responses API (natively), the Realtime API (WebSocket), completions, embeddings, images, speech, transcription and translation on a deployment; api-key or Entra ID token.',
      params: {
        type: 'object',
        additionalProperties: false,
        properties: { defaultApiVersion: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}(-preview)?$' } },
      },
    },
    params,
    // LiteLLM's names, for `llm-gateway import litellm`: a deployment's api_base host is the resource,
    // its model the deployment, its api_version the API version.
    foreignNames: { litellm: ['azure'], litellmTarget: litellmDeployment },
    create() {
      return {
        id: 'azure-openai',
        name: 'Azure OpenAI',
        operations: {
          chat: azureChat(version),
          completion: azureCompletion(version),
          embed: azureEmbed(version),
          imageGenerate: azureImageGenerate(version),
          imageEdit: azureImageEdit(version),
          speech: azureSpeech(version),
          transcription: azureTranscription(version),
          translation: azureTranslation(version),
          models: azureModels(version),
          responses: azureResponses,
          realtime: azureRealtime,
        },
        // Parts are forwarded unchanged: Azure's deployments take what the model behind them takes.
        capabilities: { contentParts: () => OPENAI_CONTENT_PARTS },
        baseUrl: azureBaseUrl,
        auth(_request, target): Record<string, string> {
          const token = target.credentials.apiKey;
          if (!token) throw errors.authentication('Azure OpenAI needs "Authorization: Bearer <api key or Entra ID token>".', { code: 'missing_provider_credentials' });
          return isEntraToken(token) ? { authorization: `Bearer ${token}` } : { 'api-key': token };
        },
        authHeaders: ['api-key', 'authorization'],
        mapError: mapAzureError,
        // A deployment is priced as the model it runs, named by the model-name header.
        modelCatalogue: { catalogProvider: 'azure' },
        pricing: { catalogProvider: 'azure', modelName: (model, headers) => headers[AZURE_HEADERS.modelName] ?? model },
        passthroughUrl(pathAndQuery, target) {
          if (/[?&]api-version=/.test(pathAndQuery)) return `${target.baseUrl}${pathAndQuery}`;
          return `${target.baseUrl}${pathAndQuery}${pathAndQuery.includes('?') ? '&' : '?'}api-version=${encodeURIComponent(apiVersion(target, version))}`;
        },
      };
    },
  };
}
