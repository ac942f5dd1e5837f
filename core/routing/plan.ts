import type { AuthSlice } from '../pipeline/context.js';
import type { Usage } from '../spec/unified.js';
import type { Route, Target } from './route.js';

/** A route with every target's references opened (provider plugin, credentials, base URL): what the executor runs. */
export interface ResolvedRoute {
  readonly route: Route;
  readonly targets: readonly ResolvedTarget[];
}

export interface ResolvedTarget {
  /** The target's `name`, else its provider id, else `targets[<i>]`; shown in logs, metrics and `x-gateway-route-target`. */
  readonly name: string;
  /** Its key in the breaker and balancer state: the route's label and the target's path in it. */
  readonly key: string;
  readonly weight: number;
  readonly target: Target;
  /** The provider, credentials and base URL of a provider or virtual-key target. */
  readonly auth?: AuthSlice;
  /** A nested route's plan. */
  readonly route?: ResolvedRoute;
}

/** Which route a request took (for the log entry). */
export interface RouteLabel {
  /** A config route's or alias's name, or a stored route's name. */
  readonly name?: string;
  /** A stored route's id. */
  readonly id?: string;
  readonly version?: number;
  /** Where it came from: `header`, `inline`, `key`, `alias`. */
  readonly source: 'header' | 'inline' | 'key' | 'alias';
}

/** One upstream attempt of a routed request, as the log entry keeps it. */
export interface AttemptRecord {
  readonly target: string;
  readonly provider: string;
  readonly model?: string;
  /** The upstream status, or the gateway's error status when nothing was answered (502 refused, 504 timed out). */
  readonly status: number;
  readonly latencyMs: number;
  /** A failed attempt's error code: the upstream's (`error.code`, else `error.type`), or the gateway's when nothing was answered. */
  readonly errorCode?: string;
  /** A failed attempt's error message as the upstream gave it (or the gateway's), secrets removed, at most {@link ATTEMPT_MESSAGE_MAX} characters. */
  readonly message?: string;
  readonly usage?: Usage;
}

/** Longest error message kept on an attempt's record. */
export const ATTEMPT_MESSAGE_MAX = 256;

/** A target a routed request did not try, or did not retry, and why. */
export interface SkippedTarget {
  readonly target: string;
  /**
   * `breaker_open`: its circuit breaker was open; `retry_budget`: its retry budget was spent, so a
   * retry the route allowed was not sent; `attempt_cap`: the request had made `routing.retry.maxAttempts` attempts.
   */
  readonly reason: 'breaker_open' | 'retry_budget' | 'attempt_cap';
}
