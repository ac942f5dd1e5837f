import { errors, type ProviderTarget, type UpstreamRequest } from '../../../core/spec/index.js';
import { type SigningScope, signRequest } from './sigv4.js';

/** The spec's cloud-c headers (Bedrock, SageMaker): the Bearer token is the access key id, these say the rest. */
export const AWS_HEADERS = {
  secretAccessKey: 'x-gateway-cloud-c-secret-access-key',
  sessionToken: 'x-gateway-cloud-c-session-token',
  region: 'x-gateway-cloud-c-region',
} as const;

/** An AWS region name (`us-east-1`, `us-gov-west-1`): it becomes part of a host name, so nothing else passes. */
export const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/** The request's region (`x-gateway-cloud-c-region`, else `fallback`); 400 `invalid_region` when it is not a region name. */
export function awsRegion(headers: Readonly<Record<string, string | undefined>>, fallback: string): string {
  const region = headers[AWS_HEADERS.region]?.trim() || fallback;
  if (!AWS_REGION.test(region)) {
    throw errors.invalidRequest(`"${region}" is not an AWS region name (e.g. us-east-1).`, { param: AWS_HEADERS.region, code: 'invalid_region' });
  }
  return region;
}

export interface AwsSigning {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** The request's headers that are signed (SigV4 adds its own). */
  readonly headers: Readonly<Record<string, string>>;
  readonly scope: SigningScope;
  /** The 400's message for a streamed body (a pass-through request), which SigV4 cannot sign. */
  readonly streamed: string;
}

/**
 * The SigV4 headers of a request to AWS, with the target's session token when it sends one. A
 * streamed body is refused (400 `unsupported_signing`): SigV4 signs the body's hash before the
 * first byte is sent.
 */
export function signAwsRequest(request: UpstreamRequest, target: ProviderTarget, signing: AwsSigning): Record<string, string> {
  return signRequest(
    { method: request.method, url: request.url, headers: signing.headers, body: signableBody(request, signing.streamed) },
    { accessKeyId: signing.accessKeyId, secretAccessKey: signing.secretAccessKey, sessionToken: target.headers[AWS_HEADERS.sessionToken] || undefined },
    signing.scope,
  ).headers;
}

function signableBody(request: UpstreamRequest, streamed: string): string | Uint8Array {
  if (request.body == null) return '';
  if (typeof request.body === 'string' || request.body instanceof Uint8Array) return request.body;
  throw errors.invalidRequest(streamed, { param: AWS_HEADERS.secretAccessKey, code: 'unsupported_signing' });
}
