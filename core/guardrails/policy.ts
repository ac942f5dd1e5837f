import type { GuardrailRegistration } from '../spec/guardrail.js';

/** What a chain does when a guardrail itself fails or overruns its time budget. */
export type FailMode = 'fail-closed' | 'fail-open';

/** One guardrail in a chain, with how the chain treats its failures. */
export interface GuardrailStep {
  readonly guardrail: GuardrailRegistration;
  /** Default `fail-closed`: an error or a time-out counts as a denial. */
  readonly onError?: FailMode;
  /** Time budget in milliseconds (default 1000). */
  readonly timeoutMs?: number;
}

/** How a stream's text is held back while output guardrails judge it. */
export type StreamWindow =
  /** Release up to the last sentence end; with none, hold at most `maxChars` (default 400), then release all but `holdChars` (default 64). */
  | { readonly kind: 'sentence'; readonly maxChars?: number; readonly holdChars?: number }
  /** Always hold back the last `size` characters. */
  | { readonly kind: 'chars'; readonly size: number };

/**
 * A named, ordered chain of guardrail instances, declared in `gateway.config.ts`. Each entry is a
 * plugin factory's result (`pii({ ... })`) or a {@link GuardrailStep} wrapping one.
 */
export interface PolicyDefinition {
  readonly description?: string;
  /** Checks run on the request before it is forwarded. */
  readonly input?: ReadonlyArray<GuardrailRegistration | GuardrailStep>;
  /** Checks run on the answer (plain or streamed) before it reaches the client. */
  readonly output?: ReadonlyArray<GuardrailRegistration | GuardrailStep>;
  /** `sequential` (default): in chain order, stopping at the first denial. `parallel`: all at once. */
  readonly mode?: 'sequential' | 'parallel';
  /** Show the denial reason to the client (default false: a generic message). */
  readonly revealReasons?: boolean;
  /**
   * Pass-through requests (`/v1/<any other path>`) carry bodies no guardrail can read, so a caller
   * under this policy is refused them (403 `passthrough_not_judged`) unless the policy says
   * `allow-unjudged`: a key with a policy never reaches a provider unjudged by accident.
   */
  readonly passthrough?: 'refuse' | 'allow-unjudged';
  readonly stream?: {
    /** Default `{ kind: 'sentence' }`. */
    readonly window?: StreamWindow;
    /**
     * For output guardrails that cannot judge incrementally: `buffer` (default) holds the whole
     * answer until they have judged it; `after` streams it and judges after the fact (logged only).
     */
    readonly wholeAnswer?: 'buffer' | 'after';
  };
}

/** Wraps a guardrail with its failure mode and time budget. */
export function step(guardrail: GuardrailRegistration, options: Omit<GuardrailStep, 'guardrail'> = {}): GuardrailStep {
  return { guardrail, ...options };
}
