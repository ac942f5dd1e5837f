import { type AwsCredentials, type SigningScope, signRequest } from './sigv4.js';

/**
 * Recomputes the SigV4 signature of a request the fake received, from what went over the wire
 * (method, path, host, content-type, x-amz-date, body) and the secret the test gave the gateway (for fakes of AWS APIs).
 * Returns the problems found (empty when the signature is right).
 */
export function verifySigV4(
  request: { readonly method: string; readonly url: string; readonly headers: Readonly<Record<string, string | string[] | undefined>>; readonly body: Buffer },
  credentials: AwsCredentials,
  scope: SigningScope,
): string[] {
  const problems: string[] = [];
  const authorization = String(request.headers.authorization ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!match) return [`authorization is not a SigV4 header: ${authorization.slice(0, 40)}`];
  const [, keyId, day, signedRegion, service, signedHeaders] = match;
  if (keyId !== credentials.accessKeyId) problems.push(`access key id ${keyId}`);
  if (signedRegion !== scope.region) problems.push(`region ${signedRegion}`);
  if (service !== scope.service) problems.push(`service ${service}`);
  const amzDate = String(request.headers['x-amz-date'] ?? '');
  if (!amzDate.startsWith(day)) problems.push('x-amz-date does not match the credential scope');
  if (credentials.sessionToken && request.headers['x-amz-security-token'] !== credentials.sessionToken) problems.push('session token missing');
  const date = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  const extra: Record<string, string> = {};
  for (const name of signedHeaders.split(';')) {
    if (name === 'host' || name === 'x-amz-date' || name === 'x-amz-security-token') continue;
    extra[name] = String(request.headers[name] ?? '');
  }
  const expected = signRequest(
    { method: request.method, url: `http://${String(request.headers.host)}${request.url}`, headers: extra, body: request.body },
    credentials,
    scope,
    date,
  );
  if (expected.headers.authorization !== authorization) problems.push('signature does not match the request received');
  return problems;
}

