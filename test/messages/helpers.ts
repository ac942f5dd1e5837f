import Anthropic from '@anthropic-ai/sdk';
import { ACCOUNT_KEY, PROVIDER_KEY } from '../harness.js';
import { checkMessagesStream, type CheckedStream } from '../fakes/messages-stream.js';

/**
 * The official Anthropic SDK pointed at the gateway: the account key in `x-gateway-api-key`, the
 * provider credential as the SDK's `authToken` (`Authorization: Bearer`), the provider and its
 * settings in `x-gateway-*` headers. (The SDK sends one credential: `apiKey` as `x-api-key`, or
 * `authToken`; the gateway key alone in either is tested in auth.e2e.test.ts.)
 */
export function anthropicClient(gatewayUrl: string, headers: Record<string, string>, providerKey = PROVIDER_KEY): Anthropic {
  return new Anthropic({ authToken: providerKey, baseURL: gatewayUrl, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': ACCOUNT_KEY, ...headers } });
}

/** A raw POST to the gateway's Messages route (for what the SDK would refuse to send, and for the raw stream text). */
export async function postMessages(gatewayUrl: string, body: unknown, headers: Record<string, string>, path = '/v1/messages'): Promise<Response> {
  return fetch(`${gatewayUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': ACCOUNT_KEY, authorization: `Bearer ${PROVIDER_KEY}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A streamed Messages request sent raw; its body checked against the event grammar. */
export async function streamChecked(gatewayUrl: string, body: Record<string, unknown>, headers: Record<string, string>): Promise<CheckedStream & { response: Response }> {
  const response = await postMessages(gatewayUrl, { ...body, stream: true }, headers);
  if (response.status !== 200) throw new Error(`stream answered ${response.status}: ${await response.text()}`);
  return { ...checkMessagesStream(await response.text()), response };
}

/** A small PNG (1x1) and a one-page PDF, base64, as agents send them. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
export const PDF_BASE64 = Buffer.from(
  '%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
).toString('base64');

export const weatherTool = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};
