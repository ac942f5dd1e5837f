import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeEvent, encodeException } from '../../plugins/providers/bedrock/bedrock-eventstream.js';
import { signRequest } from '../../plugins/shared/aws-sigv4/sigv4.js';
import type { RecordedRequest } from './openai-fake.js';

const fixtures = join(process.cwd(), 'plugins/providers/bedrock/__fixtures__');

export const bedrockFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** A recorded ConverseStream (one frame per line: `{event, payload}` or `{exception, payload}`) as eventstream frames. */
export function bedrockStreamFrames(name: string): Buffer[] {
  return bedrockFixture(name)
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const frame = JSON.parse(line) as { event?: string; exception?: string; payload: Record<string, unknown> };
      return frame.exception ? encodeException(frame.exception, String(frame.payload.message)) : encodeEvent(frame.event!, frame.payload);
    });
}

/**
 * Recomputes the SigV4 signature of a request the fake received, from what went over the wire
 * (method, path, host, content-type, x-amz-date, body) and the secret the test gave the gateway.
 * Returns the problems found (empty when the signature is right).
 */
export function checkSigV4(
  request: Pick<RecordedRequest, 'method' | 'url' | 'headers' | 'body'>,
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
  region: string,
): string[] {
  const problems: string[] = [];
  const authorization = String(request.headers.authorization ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!match) return [`authorization is not a SigV4 header: ${authorization.slice(0, 40)}`];
  const [, keyId, day, signedRegion, service, signedHeaders] = match;
  if (keyId !== credentials.accessKeyId) problems.push(`access key id ${keyId}`);
  if (signedRegion !== region) problems.push(`region ${signedRegion}`);
  if (service !== 'bedrock') problems.push(`service ${service}`);
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
    { region, service: 'bedrock' },
    date,
  );
  if (expected.headers.authorization !== authorization) problems.push('signature does not match the request received');
  return problems;
}
