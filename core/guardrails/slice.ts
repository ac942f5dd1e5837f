import type { GuardrailSide, GuardrailVerdict, Restorer } from '../spec/guardrail.js';
import type { CompiledStep } from './registry.js';
import type { FailMode } from './policy.js';

// The guardrail stage's slice of the request's context, declared here by module augmentation, so
// that core/pipeline/context.ts imports nothing above the pipeline.
declare module '../pipeline/context.js' {
  interface GatewayContext {
    /** Written by the guardrail stage. */
    guardrail?: GuardrailSlice;
  }
}

export interface GuardrailSlice {
  /** The policy that applied, if any. */
  policy?: string;
  /** One entry per guardrail run (for a stream: per guardrail, aggregated over its window checks). */
  readonly verdicts: GuardrailRecord[];
  /**
   * What puts back in the answer what the input transforms took out (masked values), when one of
   * them returned a restorer; applied to the answer after the output guardrails. Request memory
   * only: never logged.
   */
  restorer?: Restorer;
  /**
   * What the input chain's restorers carry to the conversation's next turn (a stored Response's
   * `previous_response_id`), made when the operation stores the turn; absent when nothing restores.
   * The operation seals it with the vault; it is never logged.
   */
  conversation?: () => ConversationMask | undefined;
  /** Verdicts of asynchronous checks, reused for identical input within this request (core/guardrails/chain.ts); set when a policy applies. */
  memo?: VerdictMemo;
  // `output` (the output judge) is declared by its owner, core/guardrails/output/index.ts (module augmentation).
}

/**
 * What a conversation's turn carries to the next: the policy whose input chain made it, and by chain
 * position what that guardrail's restorer kept (`Restorer.carry()`; null: nothing). The next turn
 * uses it only under the same policy with a chain of the same length.
 */
export interface ConversationMask {
  readonly policy: string;
  readonly steps: ReadonlyArray<string | null>;
}

/** One guardrail's verdict as the log records it (a transform's `changes` are counts, never values). */
export interface GuardrailRecord {
  guardrail: string;
  side: GuardrailSide;
  verdict: GuardrailVerdict;
  ms: number;
  /** Set when the guardrail itself failed; the verdict is then what its fail mode decided. */
  failure?: 'error' | 'timeout';
  /** With a failure: the fail mode that decided the verdict (`fail-open`: allowed although the guardrail failed). */
  onError?: FailMode;
  /** How many of its checks reused a verdict of identical input earlier in the request (no second call); absent when none. */
  cached?: number;
  /** How many times it judged (a stream's windows); absent when once. */
  checks?: number;
  /**
   * What it flagged in the judged texts (its verdict's `flagged`, else the texts it denied or
   * changed): masked wherever the request is logged, never logged itself. Absent when nothing.
   */
  flagged?: string[];
}

/**
 * The verdicts of one request's asynchronous checks (a service called over the network), by
 * guardrail instance and what it judged, so identical text judged again within the request (a
 * stream's last window judged once more at its end, a parallel chain's re-run) costs no second call. Failures are not kept. It lives as long as the request.
 */
export type VerdictMemo = Map<CompiledStep, Map<string, GuardrailVerdict>>;
