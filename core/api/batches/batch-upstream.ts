import type { Readable } from 'node:stream';
import { errors, GatewayError, upstreamError } from '../../errors.js';
import { readChunks } from '../../http/body.js';
import { answerTooLarge } from '../../http/upstream-answer.js';
import { bodyFailure, type UpstreamClient } from '../../http/upstream.js';
import type { AuthSlice } from '../../pipeline/context.js';
import type { UpstreamRequest } from '../../spec/provider.js';

/**
 * Sends one of a batch's upstream requests (create, retrieve, cancel, results) as the forward stage
 * sends a model call: the caller's forwarded headers, then the provider's `auth()` on the final
 * request, through the same undici pools (a custom host's connections checked again). The answer is
 * read whole, at most `maxBytes`; an upstream error is mapped by the provider's `mapError`, status kept.
 */
export async function sendBatchRequest(
  upstream: UpstreamClient,
  auth: AuthSlice,
  mapped: UpstreamRequest,
  options: { signal: AbortSignal; maxBytes: number },
): Promise<Buffer> {
  const { provider, target } = auth;
  const request = { ...mapped, headers: { ...mapped.headers, ...auth.forwardHeaders } };
  Object.assign(request.headers, provider.auth(request, target));
  const answer = await upstream.send(request, { signal: options.signal, guarded: target.customHost });
  const bytes = await readAll(answer.body, options.maxBytes, answer.origin, provider.id, options.signal);
  if (answer.status >= 400) {
    throw upstreamError(answer.status, provider.mapError({ status: answer.status, headers: answer.headers, body: bytes }), provider.id);
  }
  return bytes;
}

async function readAll(body: Readable, maxBytes: number, origin: string, provider: string, signal: AbortSignal): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    await readChunks(body, (chunk) => {
      size += chunk.byteLength;
      if (size > maxBytes) throw answerTooLarge(maxBytes, provider);
      chunks.push(chunk);
    });
  } catch (error) {
    if (size > maxBytes) throw error;
    throw bodyFailure(error, origin, signal);
  }
  return Buffer.concat(chunks, size);
}

/** An upstream answer parsed as JSON (502 `upstream_invalid_json` when it is not). */
export function upstreamJson(bytes: Buffer, provider: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw errors.badGateway(`The provider "${provider}" answered with a body that is not JSON.`, { code: 'upstream_invalid_json' });
  }
}

/**
 * What a batch adapter reads from an upstream answer (its state, its line results): an answer it
 * cannot read is the provider's fault, a 502 `upstream_invalid_response`, as for `fromUpstream`.
 */
export function readUpstream<T>(provider: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw errors.badGateway(`The provider "${provider}" answered with a batch the gateway could not read.`, { code: 'upstream_invalid_response' });
  }
}
