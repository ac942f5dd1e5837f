import type { ResponsesAdapter } from '../../../core/spec/index.js';
import { nativeResponsesAdapter } from '../../shared/responses-native.js';
import { AZURE_HEADERS, apiVersion } from './azure-target.js';

/** The api-version of the Responses API when the request names none (the default data-plane version predates it). */
export const RESPONSES_API_VERSION = '2025-04-01-preview';

/** The built-in tools Azure OpenAI runs in its Responses API. */
const AZURE_BUILT_IN_TOOLS = ['file_search', 'code_interpreter', 'image_generation', 'computer_use_preview', 'mcp'];

/**
 * Azure OpenAI's Responses API (`{resource}/openai/responses?api-version=…`), natively. Azure
 * names the deployment in `model`: the deployment header, when sent, takes its place.
 */
export const azureResponses: ResponsesAdapter = nativeResponsesAdapter({
  url: (target) => `${target.baseUrl}/responses?api-version=${encodeURIComponent(apiVersion(target, RESPONSES_API_VERSION))}`,
  builtInTools: AZURE_BUILT_IN_TOOLS,
  body: (request, target) => {
    const deployment = target.headers[AZURE_HEADERS.deploymentId]?.trim();
    return deployment && deployment !== request.model ? { ...request, model: deployment } : undefined;
  },
});
