import type { Readable } from 'node:stream';
import { errors, GatewayError } from '../errors.js';
import { WholeBody } from './body.js';
import type { MemoryLease } from './memory-budget.js';

// Reading an upstream answer whole, and mapping it, for every caller of a provider: the operations
// (core/api/operation.ts re-exports these) and the cache's embedder.

/** The default of `upstream.maxAnswerBytes` (64 MiB): an answer the gateway reads whole (JSON, transcripts) may be at most this big. */
export const MAX_UPSTREAM_ANSWER_BYTES = 64 * 1024 * 1024;

export const answerTooLarge = (limit: number, provider: string): GatewayError =>
  errors.badGateway(`The provider "${provider}" answered with more than ${limit} bytes, which the gateway does not read into memory.`, {
    code: 'upstream_response_too_large',
  });

/**
 * Reads a whole upstream answer the gateway must parse. Past `limit` bytes it stops reading (which
 * cancels the upstream body) and answers 502, so a misbehaving host cannot exhaust memory. Each
 * chunk grows `memory` (when given) first, by `copies` times its size: past the shared budget the
 * read stops with 503 `overloaded`.
 */
export async function readUpstreamAnswer(body: Readable, provider: string, limit = MAX_UPSTREAM_ANSWER_BYTES, memory?: MemoryLease, copies = 1): Promise<Buffer> {
  const answer = new WholeBody(body, limit, answerTooLarge, provider, memory, copies);
  await answer.run();
  return answer.bytes();
}

/**
 * Runs a provider's response mapping. A mapper that throws on an answer it cannot read (a shape the
 * provider should not have sent) is the provider's fault: 502, not an unexpected 500.
 */
export function mapAnswer<Response>(provider: string, map: () => Response): Response {
  try {
    return map();
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw errors.badGateway(`The provider "${provider}" answered with a body the gateway cannot read: ${(error as Error)?.message ?? 'unknown shape'}.`, {
      code: 'upstream_invalid_response',
    });
  }
}
