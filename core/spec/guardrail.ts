import type { PluginRegistration } from './manifest.js';
import type { OperationName } from './unified.js';

/**
 * The guardrail-plugin contract. A guardrail judges text on the way in (the request) or on the way
 * out (the response); it never sees the Koa context and never throws for a policy decision: it
 * returns a verdict. Policies (ordered chains of guardrail instances) are declared in code.
 */

/** Which side of the exchange a guardrail can judge. */
export type GuardrailSide = 'input' | 'output';

/** What a guardrail is asked to judge. */
export interface GuardrailInput {
  readonly side: GuardrailSide;
  readonly operation: OperationName;
  readonly model?: string;
  /** The texts under judgement, in order (message contents, or output text). */
  readonly texts: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
}

/** The outcome of one check. A denial's reason is kept for the log, never shown to the client by default. */
export type GuardrailVerdict =
  | { readonly action: 'allow' }
  | { readonly action: 'deny'; readonly reason: string }
  | { readonly action: 'transform'; readonly texts: readonly string[]; readonly changes: number };

/** A created guardrail plugin instance. */
export interface GuardrailPlugin {
  readonly id: string;
  readonly sides: readonly GuardrailSide[];
  check(input: GuardrailInput): Promise<GuardrailVerdict>;
}

/** What a guardrail's factory returns. */
export type GuardrailRegistration = PluginRegistration<'guardrail', GuardrailPlugin>;
