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

/** One part of a multipart/form-data body as a fake received it. */
export interface ReceivedPart {
  readonly name: string;
  readonly filename?: string;
  readonly contentType?: string;
  readonly bytes: Buffer;
}

/**
 * The parts of a received multipart/form-data body (empty when the request is not one), so a fake
 * checks a form as the provider would: its fields, and its files byte for byte.
 */
export function multipartParts(request: ReceivedRequest): ReceivedPart[] {
  const boundary = /^multipart\/form-data;.*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(request.headers['content-type'] ?? '');
  if (!boundary) return [];
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: ReceivedPart[] = [];
  let start = request.body.indexOf(delimiter);
  while (start !== -1) {
    const next = request.body.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    const part = request.body.subarray(start + delimiter.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    if (split !== -1) {
      const head = part.subarray(0, split).toString('utf8');
      const name = /name="([^"]*)"/i.exec(head)?.[1];
      const filename = /filename="([^"]*)"/i.exec(head)?.[1];
      const contentType = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1];
      if (name !== undefined) parts.push({ name, ...(filename === undefined ? {} : { filename }), ...(contentType === undefined ? {} : { contentType }), bytes: part.subarray(split + 4) });
    }
    start = next;
  }
  return parts;
}
