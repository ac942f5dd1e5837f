import type { AuthSlice, GatewayContext, RequestSlice } from '../pipeline/context.js';
import type { UpstreamRequest } from '../spec/provider.js';
import type { AttemptRecord, ResolvedRoute, ResolvedTarget, RouteLabel, SkippedTarget } from './plan.js';

// The routing subsystem's slices of the request's context, declared here by module augmentation
// (as Koa's and Fastify's typings let plugins extend their context), so that
// core/pipeline/context.ts imports nothing above the pipeline.
declare module '../pipeline/context.js' {
  interface GatewayContext {
    /**
     * Written by the auth stage when the request takes a route (absent on the plain path): the
     * resolved plan and which route it is. `auth` names the route's first provider target (the
     * guardrail policy and the limits read it); the target that answered is `routed.tried`.
     */
    routing?: RoutingSlice;
    /**
     * Written by the forward stage's route executor on a routed request: every attempt's record, and
     * the attempt whose answer the client gets (or the last one tried) as a value. Readers after the
     * forward stage take the answering target's auth and request from here ({@link servingAuth}).
     */
    routed?: RoutedSlice;
  }
}

export interface RoutingSlice {
  readonly plan: ResolvedRoute;
  readonly label: RouteLabel;
}

/** What the forward stage's route executor learnt while it ran a routed request. */
export interface RoutedSlice {
  /** Every upstream attempt, in order. */
  readonly attempts: AttemptRecord[];
  /**
   * The target whose answer the client gets; while the route runs, and when no attempt answered,
   * the last one tried (even when its mapping failed). Absent when no attempt was made.
   */
  tried?: AttemptTarget;
  /**
   * The attempt whose answer the client gets; while the route runs, and when no attempt answered,
   * the last one mapped. Absent when no attempt was mapped.
   */
  attempt?: Attempt;
  /** The name of the target whose answer the client gets. */
  target?: string;
  /** Targets passed over (an open breaker, the retry budget, the attempt cap), in order; absent when none. */
  skipped?: SkippedTarget[];
  /**
   * Milliseconds spent on the route before the attempt whose answer the client gets was sent:
   * failed attempts and the waits between them (all of it when no attempt answered). Server-Timing
   * and the log report it as `routing`, apart from the gateway's own time.
   */
  routingMs?: number;
}

/** One routed attempt's target as a value, built by the forward stage before the request is mapped for it. */
export interface AttemptTarget {
  readonly target: ResolvedTarget;
  /** The target's provider, credentials and base URL, with the caller, forwarded headers and policy. */
  readonly auth: AuthSlice;
  /** The validated request with the target's `override_params` merged into its body. */
  readonly request: RequestSlice;
  /**
   * The request's context as this attempt's target sees it (`auth` and `request` are the attempt's,
   * every other field is read through from the request's context; it takes no writes): what the
   * operation's mapping and response mapping are given, the same object for both.
   */
  readonly view: GatewayContext;
}

/**
 * One routed attempt, a value the forward stage builds for a target: the target, its provider and
 * credentials, the request with its `override_params`, and the upstream request built from them by
 * the transform stage's pure mapping (`buildUpstreamRequest` in `core/hooks/transform.ts`).
 */
export interface Attempt extends AttemptTarget {
  readonly upstreamRequest: UpstreamRequest;
  /** Fields of the client's request the mapping left out (as {@link TransformSlice.dropped}). */
  readonly dropped?: readonly string[];
}
