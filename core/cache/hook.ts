import type { Logger } from 'pino';
import { errors, GatewayError } from '../errors.js';
import type { GatewayContext } from '../pipeline/context.js';
import type { AnswerRecorder, CacheStatus, EmbeddingSpend } from './slice.js';
import type { Hook, Next } from '../pipeline/hook.js';
import { writeResponse } from '../pipeline/response.js';
import { routeHeaders } from '../routing/resolve.js';
import type { RouteCache } from '../routing/route.js';
import type { Clock } from '../spec/manifest.js';
import type { Usage } from '../spec/unified.js';
import type { CacheableOperation, StreamAssembly } from './cacheable.js';
import type { Embedder } from './embedder.js';
import { digest, namespaceOf, upstreamIdentity } from './key.js';
import { nearMissGuard } from './near-miss.js';
import type { Found, Probe, ResponseCache } from './response-cache.js';
import type { Flight, SingleFlight } from './single-flight.js';
import { tapStream } from '../pipeline/response.js';
import { servedRequest, servingAuth } from '../routing/attempt.js';

/** `max_age` when a cache setting gives none: an hour. */
export const DEFAULT_MAX_AGE_S = 3600;
/** A semantic hit's least cosine similarity when the setting gives none. */
export const DEFAULT_THRESHOLD = 0.95;

/** What a request asks of the cache (`x-gateway-cache`, else `Cache-Control`). */
type Control = 'no-store' | 'refresh' | 'only-if-cached';
const CONTROLS: readonly string[] = ['no-store', 'refresh', 'only-if-cached'];

/**
 * `x-gateway-cache: no-store | refresh | only-if-cached` (400 for another value), else the
 * `Cache-Control` directives `no-store`, `no-cache` (a refresh: the answer is fetched anew and
 * stored) and `only-if-cached`.
 */
export function cacheControl(headers: Readonly<Record<string, string | undefined>>): Control | undefined {
  const asked = headers['x-gateway-cache']?.trim().toLowerCase();
  if (asked) {
    if (!CONTROLS.includes(asked)) throw errors.invalidRequest(`x-gateway-cache must be one of ${CONTROLS.join(', ')}.`, { param: 'x-gateway-cache', code: 'invalid_header' });
    return asked as Control;
  }
  const directives = (headers['cache-control'] ?? '').toLowerCase().split(',').map((directive) => directive.trim());
  if (directives.includes('no-store')) return 'no-store';
  if (directives.includes('no-cache')) return 'refresh';
  if (directives.includes('only-if-cached')) return 'only-if-cached';
  return undefined;
}

/** The 504 of an `only-if-cached` request the cache cannot answer: a miss, on the log entry (`cache_status`) and in `x-gateway-cache`. */
const cacheMiss = (context: GatewayContext, embedding?: EmbeddingSpend) => {
  context.cache = { status: 'MISS', ...(embedding ? { embedding } : {}) };
  const error = errors.cacheMiss('The cache holds no answer to this request, and x-gateway-cache: only-if-cached forbids asking the provider.', { code: 'cache_miss' });
  error.headers['x-gateway-cache'] = 'MISS';
  return error;
};

export interface CacheHookDependencies {
  readonly cache: ResponseCache;
  /** The unified operations by name; those with a `cache` declaration are cached. */
  readonly operations: ReadonlyMap<string, { readonly cache?: CacheableOperation<any, any> }>;
  /** The configuration's `cache.default`: for requests whose route has no `cache`. */
  readonly fallback?: RouteCache;
  readonly embed: Embedder;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Longest text embedded for a semantic lookup (characters); a longer request is looked up exactly only. */
  readonly semanticMaxChars: number;
  /** What `usage` cost at the provider and model (USD), or undefined when unpriced. */
  readonly price: (provider: string, model: string | undefined, usage: Usage, headers: Readonly<Record<string, string | undefined>>) => number | undefined;
  /** One upstream call for identical concurrent misses; absent: every miss asks upstream. */
  readonly flights?: SingleFlight;
}

/** One request's place in the cache: its key, namespace and lifetime, and its semantic probe once made. */
interface Slot {
  readonly key: string;
  readonly namespace: string;
  readonly maxAgeMs: number;
  probe?: Probe;
  /** What embedding the request's text used (charged to the caller), once embedded. */
  embedding?: EmbeddingSpend;
}

/**
 * The response cache's hook (transform stage, before the provider mapping, so after the input
 * guardrails and before the route's attempts). It looks the request up: a hit is replayed through
 * the operation's own answer path (output guardrails, stream or JSON) and nothing goes upstream; a
 * miss goes on, and its answer, once complete and successful, is stored: a whole answer here after
 * `next()`, a stream by the stream relay before `[DONE]`. Every answer the cache decided on carries
 * `x-gateway-cache` (and `Age` on hits).
 */
export function cacheHook(dependencies: CacheHookDependencies): Hook {
  const { operations } = dependencies;
  return {
    name: 'gateway-cache',
    stage: 'transform',
    // After the input guardrails (an earlier stage), before the provider mapping and the attempts.
    before: ['gateway-transform'],
    // Not async: with the cache off (the common case) the request passes straight on, with no
    // promise of this hook's own around next() (issue 21).
    run(context, next) {
      const cacheable = operations.get(context.operation)?.cache;
      const settings = cacheable && (context.routing?.plan.route.cache ?? dependencies.fallback);
      if (cacheable === undefined || settings === undefined || settings.mode === 'off') {
        // Asked of the gateway, only-if-cached cannot be met; Cache-Control, meant for any cache on the way, is ignored here.
        // Only x-gateway-cache can make that so (and an invalid one is refused).
        if (context.incoming.headers['x-gateway-cache'] !== undefined) {
          try {
            if (cacheControl(context.incoming.headers) === 'only-if-cached') return Promise.reject(cacheMiss(context));
          } catch (error) {
            return Promise.reject(error);
          }
        }
        return next();
      }
      return throughCache(dependencies, context, next, cacheable, settings);
    },
  };
}

/**
 * The semantic probe of a request: its text embedded (what that used goes on the slot, charged to
 * the caller), its partition and guard; undefined when it has none, its text is over
 * `semanticMaxChars` (looked up exactly only, nothing embedded) or the embedding failed.
 */
async function probeOf(
  dependencies: CacheHookDependencies,
  context: GatewayContext,
  cacheable: CacheableOperation,
  settings: RouteCache,
  identity: Readonly<Record<string, unknown>>,
  slot: Slot,
): Promise<Probe | undefined> {
  const semantic = cacheable.semantic?.(identity);
  if (semantic === undefined || settings.embedding === undefined) return undefined;
  if (semantic.text.length > dependencies.semanticMaxChars) return undefined;
  try {
    const embedded = await dependencies.embed(context, settings.embedding, semantic.text);
    const costUsd = dependencies.price(embedded.provider, embedded.model, embedded.usage, embedded.headers);
    slot.embedding = { provider: embedded.provider, model: embedded.model, tokens: embedded.usage.prompt_tokens, ...(costUsd !== undefined ? { costUsd } : {}) };
    const partition = digest(context.operation, context.strict, upstreamIdentity(context), semantic.rest, settings.embedding);
    return { namespace: slot.namespace, partition, vector: embedded.vector, guard: nearMissGuard(semantic.text) };
  } catch (error) {
    dependencies.logger.warn({ cache: { operation: 'embed', reason: (error as Error)?.message } }, 'semantic cache lookup skipped');
    return undefined;
  }
}

/** Answers a request from the cache: the stored answer replayed, with `x-gateway-cache`, `Age` and, on a routed request, the route's headers. */
async function serve(dependencies: CacheHookDependencies, context: GatewayContext, cacheable: CacheableOperation, found: Found, status: CacheStatus, slot: Slot): Promise<void> {
  const { entry } = found;
  const response = await cacheable.replay(context, entry.answer);
  const ageSeconds = Math.floor(found.ageMs / 1000);
  // A routed hit answers with the route's headers as a miss does: no upstream attempt, and the target whose answer it is.
  if (context.routing) {
    Object.assign(response.headers, routeHeaders([], entry.target));
  }
  response.headers['x-gateway-cache'] = status;
  response.headers.age = String(ageSeconds);
  const savedUsd = entry.usage ? dependencies.price(entry.provider, entry.model ?? context.request.model, entry.usage, context.auth!.target.headers) : undefined;
  context.cache = {
    status,
    hit: {
      provider: entry.provider,
      ageSeconds,
      ...(entry.model !== undefined ? { model: entry.model } : {}),
      ...(savedUsd !== undefined ? { savedUsd } : {}),
      ...(found.similarity !== undefined ? { similarity: found.similarity } : {}),
    },
    ...(slot.embedding ? { embedding: slot.embedding } : {}),
  };
  writeResponse(context, response);
}

/** A request the cache applies to: looked up, served, or recorded once answered. */
async function throughCache(dependencies: CacheHookDependencies, context: GatewayContext, next: Next, cacheable: CacheableOperation, settings: RouteCache): Promise<void> {
  const { cache } = dependencies;
  const control = cacheControl(context.incoming.headers);
  const identity = control === 'no-store' ? undefined : cacheable.identity(context.request.body);
  if (identity === undefined) {
    context.cache = { status: 'BYPASS' };
    return tagged(context, next);
  }
  const namespace = namespaceOf(context.auth!.caller, settings.namespace);
  // Strict compliance changes what providers put in an answer (their extra fields), so it is part of the key.
  const key = `${namespace}/${digest(1, context.operation, context.strict, upstreamIdentity(context), identity)}`;
  const slot: Slot = { key, namespace, maxAgeMs: (settings.max_age ?? DEFAULT_MAX_AGE_S) * 1000 };
  const semantic = settings.mode === 'semantic';
  if (control !== 'refresh') {
    const exact = await cache.get(slot.key, slot.maxAgeMs);
    if (exact) return serve(dependencies, context, cacheable, exact, 'HIT', slot);
    if (semantic) slot.probe = await probeOf(dependencies, context, cacheable, settings, identity, slot);
    const near = slot.probe && (await cache.nearest(slot.probe, settings.threshold ?? DEFAULT_THRESHOLD, slot.maxAgeMs));
    if (near) return serve(dependencies, context, cacheable, near, 'SEMANTIC-HIT', slot);
    if (control === 'only-if-cached') throw cacheMiss(context, slot.embedding);
    const flight = await dependencies.flights?.claim(slot.key);
    if (flight?.role === 'follower') {
      // Another request is asking upstream for this very answer: served from it once stored, as a hit.
      const answered = await dependencies.flights!.wait(slot.key, slot.maxAgeMs);
      if (answered) return serve(dependencies, context, cacheable, answered, 'HIT', slot);
    }
    if (flight?.role === 'leader') {
      // A leader that stored and released between this request's lookup and its claim: its answer is here now.
      const late = await cache.get(slot.key, slot.maxAgeMs);
      if (late) {
        void flight.release();
        return serve(dependencies, context, cacheable, late, 'HIT', slot);
      }
      return lead(dependencies, context, next, cacheable, slot, flight);
    }
  } else if (semantic) {
    // A refreshed answer replaces the stored one and is indexed for later semantic lookups.
    slot.probe = await probeOf(dependencies, context, cacheable, settings, identity, slot);
  }
  return miss(dependencies, context, next, cacheable, slot, control === 'refresh' ? 'REFRESH' : 'MISS');
}

/** Asks upstream (the rest of the pipeline) and stores a whole answer; a stream is stored by the stream relay. */
async function miss(dependencies: CacheHookDependencies, context: GatewayContext, next: Next, cacheable: CacheableOperation, slot: Slot, status: 'MISS' | 'REFRESH', settled?: () => void): Promise<void> {
  const recorder = new AnswerStore(context, cacheable, slot, dependencies, settled);
  context.cache = { status, recorder, ...(slot.embedding ? { embedding: slot.embedding } : {}) };
  await tagged(context, next);
  const body = context.response?.body;
  if (recorder.whole !== undefined && context.response?.status === 200 && body && !('stream' in body)) await recorder.save(recorder.whole);
}

/**
 * The miss that holds its key's lease: its lease is released once its answer is stored (or found
 * not storable), when its stream closes, or when it fails — whichever comes first — so that the
 * requests waiting for it are served or go upstream themselves at once.
 */
async function lead(dependencies: CacheHookDependencies, context: GatewayContext, next: Next, cacheable: CacheableOperation, slot: Slot, leader: Extract<Flight, { role: 'leader' }>): Promise<void> {
  const release = () => void leader.release();
  let streamed = false;
  tapStream(context, (stream) => {
    streamed = true;
    stream.once('close', release);
    return stream;
  });
  try {
    await miss(dependencies, context, next, cacheable, slot, 'MISS', release);
  } finally {
    if (!streamed) release();
  }
}

/** Runs the rest of the pipeline, then tells the client what the cache did (`x-gateway-cache`), on the answer or on the error. */
async function tagged(context: GatewayContext, next: () => Promise<void>): Promise<void> {
  const status = context.cache!.status;
  try {
    await next();
  } catch (error) {
    if (error instanceof GatewayError) error.headers['x-gateway-cache'] = status;
    throw error;
  }
  if (context.response) context.response.headers['x-gateway-cache'] = status;
}

/**
 * A miss's recorder: the operation reports its answer here (whole, or chunk by chunk), and it is
 * stored once complete, unless it is an error, filtered, or denied by an output guardrail. It
 * never throws: a store that fails leaves the answer unstored.
 */
class AnswerStore implements AnswerRecorder {
  whole?: unknown;
  private assembly?: StreamAssembly<unknown, unknown>;
  private saved = false;

  constructor(
    private readonly context: GatewayContext,
    private readonly cacheable: CacheableOperation,
    private readonly slot: Slot,
    private readonly dependencies: Pick<CacheHookDependencies, 'cache' | 'clock' | 'logger'>,
    /** Called once the answer is stored or found not storable (the single-flight leader releases its lease). */
    private readonly settled?: () => void,
  ) {}

  answer(answer: unknown): void {
    this.whole = answer;
  }

  chunk(chunk: unknown): void {
    (this.assembly ??= this.cacheable.assemble?.())?.push(chunk);
  }

  /** Stores the chunks added up, or (when no chunk came) the whole answer reported by `answer()`: a stream encoder may report its final object. */
  async complete(): Promise<void> {
    const answer = this.assembly ? this.assembly.result() : this.whole;
    if (answer !== undefined) await this.save(answer);
  }

  async save(answer: unknown): Promise<void> {
    if (this.saved) return;
    this.saved = true;
    try {
      await this.store(answer);
    } finally {
      this.settled?.();
    }
  }

  private async store(answer: unknown): Promise<void> {
    const { context, cacheable, slot } = this;
    const denied = context.guardrail?.verdicts.some((record) => record.side === 'output' && record.verdict.action === 'deny');
    if (denied || !cacheable.storable(answer)) return;
    try {
      const { usage, model } = cacheable.usage(answer);
      const target = context.routed?.target;
      const entry = { storedAt: this.dependencies.clock.now(), provider: servingAuth(context)!.provider.id, model: model ?? servedRequest(context).model, ...(target !== undefined ? { target } : {}), usage, answer };
      const result = await this.dependencies.cache.put(slot.key, entry, slot.maxAgeMs);
      if (result === 'stored' && slot.probe) await this.dependencies.cache.indexVector(slot.probe, slot.key);
    } catch (error) {
      this.dependencies.logger.warn({ cache: { operation: 'write', reason: (error as Error)?.message } }, 'response cache skipped');
    }
  }
}
