import type { ReceivedRequest } from './conformance.js';

/** Small helpers for writing a {@link ProviderFakeRenderer}. */

/** The received request's JSON body, or `{}` when it has none or it is not JSON. */
export function requestJson(request: ReceivedRequest): Record<string, any> {
  try {
    return request.body.length ? (JSON.parse(request.body.toString('utf8')) as Record<string, any>) : {};
  } catch {
    return {};
  }
}

/** Splits `text` into about `parts` pieces (at least one), for streamed answers. */
export function splitText(text: string, parts = 3): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let offset = 0; offset < text.length; offset += size) out.push(text.slice(offset, offset + size));
  return out.length ? out : [''];
}
