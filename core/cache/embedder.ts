import { mapAnswer, readUpstreamAnswer } from '../http/upstream-answer.js';
import type { OpenTarget } from '../routing/targets.js';
import type { UpstreamClient } from '../http/upstream.js';
import type { GatewayContext } from '../pipeline/context.js';
import type { CacheEmbedding, Target } from '../routing/route.js';
import type { EmbeddingRequest, Usage } from '../spec/unified.js';
import { floats } from './store.js';
import { unit } from './vector-index.js';

/** A semantic lookup's embedding: the unit vector, and what the call used (charged to the caller). */
export interface Embedded {
  readonly vector: Float32Array;
  /** The embeddings target's provider and model, and the target's headers (for its price). */
  readonly provider: string;
  readonly model: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The tokens the provider reported, else an estimate from the text's length (4 characters a token). */
  readonly usage: Usage;
}

/** Embeds a request's text for a semantic lookup. Throws when the target cannot. */
export type Embedder = (context: GatewayContext, embedding: CacheEmbedding, text: string) => Promise<Embedded>;

/** Most bytes of an embeddings answer read (a 3072-float vector is ~60 KB of JSON). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** An embeddings call's time-out when the target sets none. */
const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Calls an embeddings target through the gateway's provider plugins: the target is opened like a
 * route's (a provider with a stored credential or the caller's Bearer, or a virtual key), the
 * provider's own adapter maps the request and its answer, and the upstream client sends it
 * (cancelled when the client leaves). It is not logged as a request of its own: what it used is
 * returned, and the cache hook charges it to the caller's request (its log entry's cost, its key's
 * budget).
 */
export function createEmbedder(dependencies: { open: OpenTarget; upstream: UpstreamClient }): Embedder {
  return async (context, embedding, text) => {
    const { model, request_timeout: timeoutMs, ...target } = embedding;
    const auth = await dependencies.open(context, { caller: context.auth!.caller }, target as Target, 'cache.embedding');
    const { provider } = auth;
    const adapter = provider.operations.embed;
    if (!adapter) throw new Error(`the provider "${provider.id}" has no embeddings operation`);
    const request: EmbeddingRequest = { model, input: text };
    adapter.validate?.(request);
    const mapped = adapter.toUpstream(request, auth.target);
    const upstreamRequest = { ...mapped, headers: { ...mapped.headers } };
    Object.assign(upstreamRequest.headers, provider.auth(upstreamRequest, auth.target));
    const answer = await dependencies.upstream.send(upstreamRequest, { signal: context.signal, guarded: auth.target.customHost, timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_MS });
    const bytes = await readUpstreamAnswer(answer.body, provider.id, MAX_ANSWER_BYTES);
    if (answer.status >= 400) throw new Error(`the embeddings target answered ${answer.status}`);
    const response = mapAnswer(provider.id, () => adapter.fromUpstream(JSON.parse(bytes.toString('utf8')), request, auth.target, answer.headers));
    const values = response.data?.[0]?.embedding;
    const raw = typeof values === 'string' ? floats(Buffer.from(values, 'base64')) : Array.isArray(values) ? values : undefined;
    const scaled = raw && unit(raw);
    if (scaled === undefined) throw new Error('the embeddings target answered no usable vector');
    const reported = response.usage?.prompt_tokens;
    const tokens = typeof reported === 'number' && Number.isFinite(reported) && reported >= 0 ? reported : Math.ceil(text.length / 4);
    return { vector: scaled, provider: provider.id, model, headers: auth.target.headers, usage: { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens } };
  };
}
