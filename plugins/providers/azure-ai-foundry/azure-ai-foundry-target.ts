import { errors, type ProviderTarget } from '../../../core/spec/index.js';
import { AZURE_HEADERS } from '../azure-openai/azure-target.js';

/** The Azure AI model inference API version sent when neither the request nor the params name one. */
export const FOUNDRY_API_VERSION = '2024-05-01-preview';

const RESOURCE = /^[a-z0-9][a-z0-9-]{0,62}$/i;
const API_VERSION = /^\d{4}-\d{2}-\d{2}(-preview)?$/;

/** `https://<resource>.services.ai.azure.com/models`: the resource from `x-gateway-cloud-a-resource-name`, else the `resource` param. */
export function foundryBaseUrl(headers: Readonly<Record<string, string | undefined>>, fallback: string | undefined): string {
  const resource = headers[AZURE_HEADERS.resourceName]?.trim() || fallback;
  if (!resource) {
    throw errors.invalidRequest(`Azure AI Foundry needs the resource name: send "${AZURE_HEADERS.resourceName}" or set the plugin's resource param.`, {
      param: AZURE_HEADERS.resourceName,
      code: 'missing_required_header',
    });
  }
  if (!RESOURCE.test(resource)) throw errors.invalidRequest(`"${resource.slice(0, 64)}" is not an Azure AI Foundry resource name.`, { param: AZURE_HEADERS.resourceName, code: 'invalid_header' });
  return `https://${resource}.services.ai.azure.com/models`;
}

/** The URL with `api-version` from `x-gateway-cloud-a-api-version`, else the default. */
export function withApiVersion(url: string, target: ProviderTarget, fallback: string): string {
  const version = target.headers[AZURE_HEADERS.apiVersion]?.trim() || fallback;
  if (!API_VERSION.test(version)) {
    throw errors.invalidRequest(`"${version.slice(0, 40)}" is not a valid api-version (YYYY-MM-DD or YYYY-MM-DD-preview).`, { param: AZURE_HEADERS.apiVersion, code: 'invalid_header' });
  }
  return `${url}${url.includes('?') ? '&' : '?'}api-version=${version}`;
}
