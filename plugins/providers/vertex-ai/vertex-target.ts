import { errors, type ProviderTarget } from '../../../core/spec/index.js';

export const PROJECT_HEADER = 'x-gateway-cloud-b-project-id';
export const REGION_HEADER = 'x-gateway-cloud-b-region';
export const REQUEST_TYPE_HEADER = 'x-cloud-b-llm-request-type';
/** Vertex AI's own header choosing Provisioned Throughput (`dedicated`) or pay-as-you-go (`shared`). */
export const VERTEX_REQUEST_TYPE_HEADER = 'X-Vertex-AI-LLM-Request-Type';

export type Publisher = 'google' | 'anthropic';

/** The publisher of a model id: an explicit `anthropic/` or `google/` prefix, else Claude models are Anthropic's. */
export function publisherOf(model: string): { publisher: Publisher; model: string } {
  const prefixed = /^(google|anthropic)\/(.+)$/.exec(model);
  if (prefixed) return { publisher: prefixed[1] as Publisher, model: prefixed[2] };
  return { publisher: /^claude/i.test(model) ? 'anthropic' : 'google', model };
}

/**
 * Google's formats, which keep both values to one DNS label and one path segment: a region is
 * `global` or `<area>-<direction><number>` (`us-central1`, `europe-west4`, `northamerica-northeast2`);
 * a project id is 6-30 lowercase letters, digits and hyphens, starting with a letter and not ending
 * with a hyphen (Resource Manager's `projectId`); a project number (digits) is accepted too.
 */
const REGION = /^(?:global|[a-z]+-[a-z]+[0-9]{1,2})$/;
const PROJECT = /^(?:[a-z][a-z0-9-]{4,28}[a-z0-9]|[0-9]{1,20})$/;

function required(headers: ProviderTarget['headers'], name: string, format: RegExp, example: string): string {
  const value = headers[name]?.trim();
  if (!value) throw errors.invalidRequest(`Invalid '${name}': the header ${name} is required by the vertex-ai provider.`, { param: name, code: 'invalid_value' });
  if (!format.test(value)) throw errors.invalidRequest(`Invalid '${name}': is not in Google's format (${example}).`, { param: name, code: 'invalid_value' });
  return value;
}

export const regionOf = (headers: ProviderTarget['headers']): string =>
  required(headers, REGION_HEADER, REGION, 'a region such as "us-central1" or "europe-west4", or "global"');

const projectOf = (headers: ProviderTarget['headers']): string =>
  required(headers, PROJECT_HEADER, PROJECT, 'a project id of 6-30 lowercase letters, digits and hyphens starting with a letter, such as "my-project", or a project number');

/** Vertex AI's endpoint for a region (`global` has no regional prefix). */
export const vertexBaseUrl = (region: string): string =>
  region === 'global' ? 'https://aiplatform.googleapis.com/v1' : `https://${region}-aiplatform.googleapis.com/v1`;

/** `…/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}` */
export function vertexModelUrl(target: ProviderTarget, model: string, method: string): { url: string; publisher: Publisher } {
  const project = projectOf(target.headers);
  const region = regionOf(target.headers);
  const resolved = publisherOf(model);
  const modelPath = encodeURIComponent(resolved.model).replace(/%40/g, '@');
  return {
    url: `${target.baseUrl}/projects/${project}/locations/${region}/publishers/${resolved.publisher}/models/${modelPath}:${method}`,
    publisher: resolved.publisher,
  };
}

/** Request headers every Vertex call carries: JSON, and the forwarded request type when given. */
export function vertexHeaders(target: ProviderTarget): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const requestType = target.headers[REQUEST_TYPE_HEADER];
  if (requestType) headers[VERTEX_REQUEST_TYPE_HEADER] = requestType;
  return headers;
}
