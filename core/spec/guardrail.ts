import type { PluginDependencies, PluginManifest } from './manifest.js';
import type { OperationName } from './unified.js';

/**
 * The guardrail-plugin contract. A guardrail judges text on the way in (the request) or on the way
 * out (the response); it never sees the Koa context and never throws for a policy decision: it
 * returns a verdict. Policies (ordered chains of guardrail instances) are declared in code, and the
 * core runs them without knowing any guardrail by name.
 */

/** Which side of the exchange a guardrail can judge. */
export type GuardrailSide = 'input' | 'output';

/** Request parameters a guardrail may read (and, through a transform, rewrite). */
export interface GuardrailParameters {
  /** `max_completion_tokens`, else `max_tokens`, of a chat request; `max_tokens` of a text completion. */
  readonly maxTokens?: number;
}

/** What a guardrail is asked to judge. */
export interface GuardrailInput {
  readonly side: GuardrailSide;
  readonly operation: OperationName;
  readonly model?: string;
  /** The texts under judgement, in order (message contents or a completion prompt, or output text). */
  readonly texts: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
  readonly parameters: GuardrailParameters;
  /**
   * True while a stream is still flowing and more text may follow the last text. A guardrail that
   * matches spans should leave a match that touches the end of the text for a later call (the
   * stream window holds that tail back), so a span split across chunks is judged whole.
   */
  readonly partial: boolean;
  /**
   * What this guardrail's restorer kept from the earlier turns of the conversation the request
   * continues ({@link Restorer.carry}: a Responses request's `previous_response_id`), opened from the
   * vault; absent on a request that continues none. A masking guardrail reuses its placeholders, and
   * returns a transform with a restorer even when the turn brings nothing new to mask (the answer may
   * name the earlier placeholders), listing the carried values in `flagged` so the log masks them.
   */
  readonly carried?: string;
}

/** What a transform changed, as counts by kind (`{ email: 2 }`): never the values themselves. */
export type GuardrailChanges = Readonly<Record<string, number>>;

/**
 * The outcome of one check. A denial's reason is kept for the log, never shown to the client
 * unless the policy reveals reasons; it must not quote the offending value.
 *
 * `flagged` (optional on a denial and a transform) lists what the guardrail objected to: the
 * substrings of the judged texts it matched (a card number, an e-mail address, a banned word). The
 * gateway never stores them in clear: the log masks each one in the stored bodies, reasons and error
 * messages, and never records the list itself. `[]` says that nothing in the texts was at fault (a
 * model or token-limit check). Left out, the gateway cannot tell: a denial then has every text it
 * judged masked in the log, a transform every text it changed.
 */
export type GuardrailVerdict =
  | { readonly action: 'allow' }
  | { readonly action: 'deny'; readonly reason: string; readonly flagged?: readonly string[] }
  | {
      readonly action: 'transform';
      /** The new texts, same length and order as the input's (absent when only parameters changed). */
      readonly texts?: readonly string[];
      readonly parameters?: GuardrailParameters;
      readonly changes: GuardrailChanges;
      readonly flagged?: readonly string[];
      /**
       * Puts back what this transform took out (a masking guardrail's placeholders → the values):
       * the gateway applies it to the answer on its way to the client, after the output
       * guardrails. It lives only in the request's memory: the log records neither it nor what it holds.
       */
      readonly restorer?: Restorer;
    };

/**
 * Undoes an input transform in the answer. The gateway calls it on every string of a whole answer
 * and on a stream's text as it flows (holding back, at the end of a fragment, what `heldFrom` says
 * may be the start of something to restore, until the text that follows decides). It must restore
 * only what its own transform issued for this request: any other text (a placeholder a model
 * invented) stays as it is.
 */
export interface Restorer {
  /** `text` with what the transform issued put back; `json`: the text is inside a JSON string (tool-call arguments), so values are escaped for it. */
  restore(text: string, json: boolean): string;
  /** Where, at the end of `text`, something starts that the next fragment may complete into a restorable one; `text.length` when nothing does. */
  heldFrom(text: string): number;
  /**
   * What to keep with a stored conversation so that its next turn reuses the same placeholders and
   * restores them (handed back as {@link GuardrailInput.carried}). The gateway seals it with the
   * vault before storing it and never logs it. Absent: nothing outlives the request.
   */
  carry?(): string;
  /**
   * `text` with what this restorer puts back taken out again (the values replaced by their
   * placeholders): how the gateway stores a conversation's answer as the model wrote it.
   */
  conceal?(text: string, json: boolean): string;
}

/** A created guardrail instance. `check` may answer synchronously (cheap checks skip the timer). */
export interface GuardrailPlugin {
  readonly id: string;
  readonly sides: readonly GuardrailSide[];
  /**
   * Refuses a request by returning a `deny` verdict, never by throwing. A `check` that throws (or
   * rejects, or overruns its time budget) has failed: its policy step's fail mode decides, a denial
   * when `fail-closed` (the default) and an allow when `fail-open`, and the log records the failure.
   * What it threw never reaches the client.
   */
  check(input: GuardrailInput): GuardrailVerdict | Promise<GuardrailVerdict>;
}

/** A guardrail's manifest: the common one plus what a policy author must know. */
export interface GuardrailManifest extends PluginManifest {
  readonly kind: 'guardrail';
  /** The sides it can judge. */
  readonly stages: readonly GuardrailSide[];
  /**
   * Whether it can judge a stream's text as it flows (a window at a time). One that cannot (a JSON
   * schema of the whole answer) runs at the stream's end; the policy says whether the stream is then
   * buffered or judged after the fact.
   */
  readonly incremental: boolean;
}

/**
 * A guardrail plugin's factory, carrying its manifest so that it can be listed (at
 * `GET /admin/plugins`) without being configured.
 */
export type GuardrailFactory = ((...params: never[]) => GuardrailRegistration) & { readonly manifest: GuardrailManifest };

/** What a guardrail's factory returns. `Params` types the factory's argument for tsc. */
export interface GuardrailRegistration<Params = unknown> {
  readonly manifest: GuardrailManifest;
  readonly params: Params;
  create(dependencies: PluginDependencies): GuardrailPlugin;
}
