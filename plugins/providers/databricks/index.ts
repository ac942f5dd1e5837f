import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { type ChatQuirks, compatibleChatAdapter, compatibleEmbedAdapter } from '../openai-compatible/index.js';
import { mapDatabricksError } from './databricks-error.js';
import { workspaceUrl } from './databricks-target.js';

export { HOST_HEADER as DATABRICKS_HOST_HEADER } from './databricks-target.js';

export interface DatabricksParams {
  /** The workspace host used when a request names none in `x-gateway-databricks-host`. */
  host?: string;
}

/** What Databricks serving endpoints are known to differ in: nothing documented; `n` > 1 refused as the conservative choice. */
export const DATABRICKS_CHAT_QUIRKS: ChatQuirks = { n: false };

/** Databricks Model Serving: chat and embeddings on a workspace's serving endpoints (the endpoint name is the model), a token as Bearer. */
export function databricks(params: DatabricksParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'databricks',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: "Databricks Model Serving: chat and embeddings through a workspace's OpenAI-compatible serving endpoints (the endpoint name is the model).",
      params: { type: 'object', additionalProperties: false, properties: { host: { type: 'string', minLength: 1 } } },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['databricks'] },
    create() {
      return {
        id: 'databricks',
        name: 'Databricks',
        operations: {
          chat: compatibleChatAdapter({ provider: 'databricks', path: '/serving-endpoints/chat/completions', quirks: DATABRICKS_CHAT_QUIRKS }),
          embed: compatibleEmbedAdapter({ provider: 'databricks', path: '/serving-endpoints/embeddings' }),
        },
        capabilities: { developerRole: () => false },
        baseUrl: (headers) => workspaceUrl(headers, params.host),
        auth(_request, target) {
          if (!target.credentials.apiKey) {
            throw errors.authentication('Databricks needs "Authorization: Bearer <Databricks token>".', { code: 'missing_provider_credentials' });
          }
          return { authorization: `Bearer ${target.credentials.apiKey}` };
        },
        authHeaders: ['authorization'],
        mapError: mapDatabricksError,
      };
    },
  };
}
