import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { watsonxChat } from './watsonx-chat.js';
import { mapWatsonxError } from './watsonx-error.js';
import { watsonxBaseUrl, type WatsonxDefaults } from './watsonx-target.js';
import { IAM_TOKEN_URL, iamExchange } from './watsonx-iam.js';

export { WATSONX_HEADERS } from './watsonx-target.js';

export interface WatsonxParams {
  /** Region when a request names none in `x-gateway-watsonx-region` (default `us-south`). */
  region?: string;
  /** Project used when a request names neither a project nor a space. */
  projectId?: string;
  /** Deployment space used when a request names neither, and no projectId is set. */
  spaceId?: string;
  /** The `version` date sent on every call (default `2024-05-01`); `x-gateway-watsonx-version` overrides it per request. */
  version?: string;
  /** The IAM token endpoint an API key is exchanged at (default IBM Cloud's `https://iam.cloud.ibm.com/identity/token`). */
  iamUrl?: string;
}

/** The API version date sent when neither the request nor the params name one. */
export const WATSONX_DEFAULT_VERSION = '2024-05-01';

/**
 * IBM watsonx.ai: chat (plain, streamed, tools) in a project or deployment space. The Bearer
 * credential is an IBM Cloud API key, exchanged at IAM for an access token (kept and renewed by
 * the core), or an IAM access token (a JWT), sent as it is.
 */
export function watsonx(params: WatsonxParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'watsonx',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'IBM watsonx.ai: chat through /ml/v1/text/chat and /ml/v1/text/chat_stream (tools, streamed), in a project or a deployment space.',
      params: {
        type: 'object',
        additionalProperties: false,
        properties: {
          region: { type: 'string', pattern: '^[a-z]{2,4}-[a-z]{2,6}$' },
          projectId: { type: 'string', pattern: '^[A-Za-z0-9-]{1,64}$' },
          spaceId: { type: 'string', pattern: '^[A-Za-z0-9-]{1,64}$' },
          version: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
          iamUrl: { type: 'string', pattern: '^https?://[^\\s]+$' },
        },
      },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['watsonx'] },
    create(dependencies) {
      const defaults: WatsonxDefaults = { region: params.region ?? 'us-south', projectId: params.projectId, spaceId: params.spaceId, version: params.version ?? WATSONX_DEFAULT_VERSION };
      return {
        id: 'watsonx',
        name: 'IBM watsonx.ai',
        operations: { chat: watsonxChat(defaults, dependencies.clock) },
        capabilities: { developerRole: () => false },
        baseUrl: (headers) => watsonxBaseUrl(headers, defaults),
        auth(_request, target) {
          if (!target.credentials.apiKey) {
            throw errors.authentication('watsonx.ai needs "Authorization: Bearer <IBM Cloud API key or IAM access token>".', { code: 'missing_provider_credentials' });
          }
          return { authorization: `Bearer ${target.credentials.exchangedToken ?? target.credentials.apiKey}` };
        },
        credentialExchange: iamExchange(params.iamUrl ?? IAM_TOKEN_URL, dependencies.clock),
        authHeaders: ['authorization'],
        mapError: mapWatsonxError,
      };
    },
  };
}
