import { upstreamError } from '../errors.js';
import type { ForwardSlice, GatewayContext } from '../pipeline/context.js';
import type { ProviderPlugin, UpstreamRequest } from '../spec/provider.js';
import { mapAnswer, readErrorBody, readUpstreamJson } from './operation.js';

/** Upstream error bodies of a followed stream are read up to this size for mapping. */
const ERROR_BODY_LIMIT = 1024 * 1024;

/**
 * Opens the stream a first answer names (a stream adapter's `follow`): the first answer's JSON is
 * read, `follow` builds the second request from it, and the forward stage's `follow` sends it with
 * the attempt's credentials, egress policy, time-out and abort. An error status of the second
 * answer is mapped by the provider's `mapError`, as for any upstream error. When `follow` names no
 * request, the first answer is the whole answer: its parsed JSON is given back.
 */
export async function followStream(
  context: GatewayContext,
  provider: ProviderPlugin,
  forward: ForwardSlice,
  follow: (firstAnswer: unknown) => UpstreamRequest | undefined,
): Promise<{ readonly forward: ForwardSlice } | { readonly parsed: Awaited<ReturnType<typeof readUpstreamJson>> }> {
  if (forward.follow === undefined) throw new Error('a followed stream without the forward stage’s follow');
  const first = await readUpstreamJson(forward, provider.id, context.signal);
  const request = mapAnswer(provider.id, () => follow(first.value));
  if (request === undefined) return { parsed: first };
  const second = await forward.follow(request);
  if (second.status >= 400) {
    const body = await readErrorBody(second, context.signal, ERROR_BODY_LIMIT);
    throw upstreamError(second.status, provider.mapError({ status: second.status, headers: second.headers, body }), provider.id);
  }
  return { forward: second };
}
