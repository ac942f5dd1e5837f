import type { GuardrailSide, GuardrailVerdict, Restorer } from '../spec/guardrail.js';

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
  // `output` (the output judge) is declared by its owner, core/guardrails/output/index.ts (module augmentation).
}

/** One guardrail's verdict as the log records it (a transform's `changes` are counts, never values). */
export interface GuardrailRecord {
  guardrail: string;
  side: GuardrailSide;
  verdict: GuardrailVerdict;
  ms: number;
  /** Set when the guardrail itself failed; the verdict is then what its fail mode decided. */
  failure?: 'error' | 'timeout';
  /** How many times it judged (a stream's windows); absent when once. */
  checks?: number;
  /**
   * What it flagged in the judged texts (its verdict's `flagged`, else the texts it denied or
   * changed): masked wherever the request is logged, never logged itself. Absent when nothing.
   */
  flagged?: string[];
}
