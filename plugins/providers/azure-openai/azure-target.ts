import { errors, type ProviderTarget } from '../../../core/spec/index.js';

/** The spec's cloud-a headers. */
export const AZURE_HEADERS = {
  resourceName: 'x-gateway-cloud-a-resource-name',
  deploymentId: 'x-gateway-cloud-a-deployment-id',
  apiVersion: 'x-gateway-cloud-a-api-version',
  modelName: 'x-gateway-cloud-a-model-name',
} as const;

/** The latest generally available data-plane version when the request names none. */
export const DEFAULT_API_VERSION = '2024-10-21';

const RESOURCE = /^[a-z0-9][a-z0-9-]{0,62}$/i;
const DEPLOYMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const API_VERSION = /^\d{4}-\d{2}-\d{2}(-preview)?$/;

function header(headers: Readonly<Record<string, string | undefined>>, name: string, pattern: RegExp, what: string): string | undefined {
  const value = headers[name]?.trim();
  if (!value) return undefined;
  if (!pattern.test(value)) throw errors.invalidRequest(`"${value}" is not a valid ${what}.`, { param: name, code: 'invalid_header' });
  return value;
}

/** `https://{resource}.openai.azure.com/openai`. */
export function azureBaseUrl(headers: Readonly<Record<string, string | undefined>>): string {
  const resource = header(headers, AZURE_HEADERS.resourceName, RESOURCE, 'Azure OpenAI resource name');
  if (!resource) {
    throw errors.invalidRequest(`Azure OpenAI needs the ${AZURE_HEADERS.resourceName} header (or x-gateway-custom-host).`, {
      param: AZURE_HEADERS.resourceName,
      code: 'missing_required_header',
    });
  }
  return `https://${resource}.openai.azure.com/openai`;
}

export const apiVersion = (target: ProviderTarget, fallback: string): string =>
  header(target.headers, AZURE_HEADERS.apiVersion, API_VERSION, 'api-version (YYYY-MM-DD or YYYY-MM-DD-preview)') ?? fallback;

/** `{base}/deployments/{deployment}/{operation}?api-version=…` */
export function deploymentUrl(target: ProviderTarget, operation: string, fallbackVersion: string): string {
  const deployment = header(target.headers, AZURE_HEADERS.deploymentId, DEPLOYMENT, 'Azure OpenAI deployment id');
  if (!deployment) {
    throw errors.invalidRequest(`Azure OpenAI needs the ${AZURE_HEADERS.deploymentId} header naming the deployment to call.`, {
      param: AZURE_HEADERS.deploymentId,
      code: 'missing_required_header',
    });
  }
  return `${target.baseUrl}/deployments/${encodeURIComponent(deployment)}/${operation}?api-version=${encodeURIComponent(apiVersion(target, fallbackVersion))}`;
}

/** A Microsoft Entra ID access token is a JWT (three base64url parts, the first `eyJ…`); API keys are 32 or 84 characters without dots. */
export const isEntraToken = (token: string): boolean => /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
