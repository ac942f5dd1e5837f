import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { type ChatQuirks, compatibleChatAdapter, mapCompatibleError } from '../openai-compatible/index.js';
import { accountUrl } from './snowflake-target.js';

export { ACCOUNT_HEADER as SNOWFLAKE_ACCOUNT_HEADER } from './snowflake-target.js';

export interface SnowflakeCortexParams {
  /** The account used when a request names none in `x-gateway-snowflake-account`. */
  account?: string;
}

/** Nothing documented differs from OpenAI's chat; `n` > 1 refused as the conservative choice. */
export const SNOWFLAKE_CHAT_QUIRKS: ChatQuirks = { n: false };

/** Snowflake Cortex: the Cortex Chat Completions API on an account, a programmatic access token (or JWT / OAuth token) as Bearer. */
export function snowflakeCortex(params: SnowflakeCortexParams = {}): ProviderRegistration {
  return {
    manifest: {
      id: 'snowflake-cortex',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: "Snowflake Cortex: chat through the account's Cortex Chat Completions API (OpenAI's shape; Claude, OpenAI, Llama, Mistral, DeepSeek and Snowflake models).",
      params: { type: 'object', additionalProperties: false, properties: { account: { type: 'string', minLength: 1 } } },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['snowflake'] },
    create() {
      return {
        id: 'snowflake-cortex',
        name: 'Snowflake Cortex',
        operations: { chat: compatibleChatAdapter({ provider: 'snowflake-cortex', path: '/api/v2/cortex/v1/chat/completions', quirks: SNOWFLAKE_CHAT_QUIRKS }) },
        capabilities: { developerRole: () => false },
        baseUrl: (headers) => accountUrl(headers, params.account),
        auth(_request, target) {
          if (!target.credentials.apiKey) {
            throw errors.authentication('Snowflake Cortex needs "Authorization: Bearer <programmatic access token>".', { code: 'missing_provider_credentials' });
          }
          return { authorization: `Bearer ${target.credentials.apiKey}` };
        },
        authHeaders: ['authorization'],
        // OpenAI's error envelope, or Snowflake's top-level {code, message}: both read by the compatible mapper.
        mapError: mapCompatibleError,
      };
    },
  };
}
