import { GoogleGenAI } from '@google/genai';
import { ACCOUNT_KEY, PROVIDER_KEY } from '../harness.js';
import { checkGeminiStream, type CheckedGeminiStream } from './stream-grammar.js';

/**
 * The official `@google/genai` SDK pointed at the gateway with only its base URL and an API key: the
 * gateway's account key as the SDK's `apiKey` (sent as `x-goog-api-key`), the provider credential as
 * `Authorization: Bearer`, the provider and its settings in `x-gateway-*` headers.
 */
export function genaiClient(gatewayUrl: string, headers: Record<string, string>): GoogleGenAI {
  return new GoogleGenAI({ apiKey: ACCOUNT_KEY, httpOptions: { baseUrl: gatewayUrl, headers: { authorization: `Bearer ${PROVIDER_KEY}`, ...headers } } });
}

/** A raw POST to a Gemini route (for what the SDK would not send, and for the raw stream text). */
export async function postGemini(gatewayUrl: string, path: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(`${gatewayUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': ACCOUNT_KEY, authorization: `Bearer ${PROVIDER_KEY}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A streamed request sent raw in both framings; each answer checked against the stream grammar. */
export async function streamChecked(gatewayUrl: string, model: string, body: unknown, headers: Record<string, string>, framing: 'sse' | 'array'): Promise<CheckedGeminiStream & { response: Response }> {
  const path = `/v1beta/models/${model}:streamGenerateContent${framing === 'sse' ? '?alt=sse' : ''}`;
  const response = await postGemini(gatewayUrl, path, body, headers);
  if (response.status !== 200) throw new Error(`stream answered ${response.status}: ${await response.text()}`);
  return { ...checkGeminiStream(await response.text(), framing), response };
}

export const weatherDeclaration = {
  name: 'get_weather',
  description: 'The weather in a city.',
  parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
