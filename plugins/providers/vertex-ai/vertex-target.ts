import { invalid } from '../../../core/api/validate.js';
import type { ProviderTarget } from '../../../core/spec/index.js';

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

function required(headers: ProviderTarget['headers'], name: string): string {
  const value = headers[name]?.trim();
  if (!value) throw invalid(name, `the header ${name} is required by the vertex-ai provider.`);
  if (!/^[A-Za-z0-9._-]+$/.test(value)) throw invalid(name, 'may hold only letters, digits, ".", "_" and "-".');
  return value;
}

export const regionOf = (headers: ProviderTarget['headers']): string => required(headers, REGION_HEADER);

/** Vertex AI's endpoint for a region (`global` has no regional prefix). */
export const vertexBaseUrl = (region: string): string =>
  region === 'global' ? 'https://aiplatform.googleapis.com/v1' : `https://${region}-aiplatform.googleapis.com/v1`;

/** `…/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}` */
export function vertexModelUrl(target: ProviderTarget, model: string, method: string): { url: string; publisher: Publisher } {
  const project = required(target.headers, PROJECT_HEADER);
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
