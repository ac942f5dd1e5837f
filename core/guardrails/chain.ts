import type { GuardrailRecord, VerdictMemo } from './slice.js';
import type { GuardrailInput, GuardrailParameters, GuardrailVerdict, Restorer } from '../spec/guardrail.js';
import type { FailMode } from './policy.js';
import type { CompiledStep } from './registry.js';

/** What a chain decided. */
export type ChainOutcome =
  | { readonly action: 'allow' }
  | { readonly action: 'deny'; readonly guardrail: string; readonly reason: string }
  | {
      readonly action: 'transform';
      readonly texts: readonly string[];
      readonly parameters: GuardrailParameters;
      /** The restorers of the transforms applied, in chain order (the answer is restored in reverse). */
      readonly restorers: readonly Restorer[];
      /** The chain position of each restorer's guardrail (same order). */
      readonly restorerSteps: readonly number[];
    };

interface StepResult {
  readonly verdict: GuardrailVerdict;
  readonly ms: number;
  readonly failure?: 'error' | 'timeout';
  /** With a failure: the fail mode that decided the verdict. */
  readonly onError?: FailMode;
  /** The verdict was remembered from an identical check earlier in the request ({@link VerdictMemo}). */
  readonly cached?: true;
  /** What the log must mask ({@link flaggedBy}); absent when nothing. */
  readonly flagged?: string[];
}

/**
 * What a verdict flagged in the texts it judged: its own `flagged` list, else (the guardrail cannot
 * say) every text of a denial and every text a transform changed. A guardrail that failed flagged nothing.
 */
function flaggedBy(verdict: GuardrailVerdict, texts: readonly string[]): string[] | undefined {
  if (verdict.action === 'allow') return undefined;
  const flagged = verdict.flagged ?? (verdict.action === 'deny' ? texts : verdict.texts ? texts.filter((text, index) => text !== verdict.texts![index]) : []);
  const values = flagged.filter((value) => typeof value === 'string' && value.length > 0);
  return values.length > 0 ? values : undefined;
}

/** A verdict as recorded: a transform's texts and any verdict's flagged values are not kept. */
function recorded(verdict: GuardrailVerdict): GuardrailVerdict {
  if (verdict.action === 'transform') return { action: 'transform', changes: verdict.changes };
  if (verdict.action === 'deny' && verdict.flagged !== undefined) return { action: 'deny', reason: verdict.reason };
  return verdict;
}

class Timeout extends Error {}

/** What a verdict depends on within one request (operation, model and metadata do not change). */
const memoKey = (input: GuardrailInput): string => JSON.stringify([input.side, input.partial, input.texts, input.parameters]);

/** Runs one guardrail within its time budget; a failure becomes a denial or an allow per its fail mode. */
async function runStep(compiled: CompiledStep, input: GuardrailInput, memo?: VerdictMemo): Promise<StepResult> {
  const startedAt = performance.now();
  let failure: 'error' | 'timeout' | undefined;
  let verdict: GuardrailVerdict;
  // Only a guardrail that answered asynchronously earlier in the request has verdicts to look up:
  // a synchronous one never pays for the key.
  const known = memo?.get(compiled);
  const remembered = known?.get(memoKey(input));
  if (remembered) {
    const flagged = flaggedBy(remembered, input.texts);
    return { verdict: remembered, ms: performance.now() - startedAt, cached: true, ...(flagged ? { flagged } : {}) };
  }
  try {
    const answer = compiled.plugin.check(input);
    if (answer instanceof Promise) {
      verdict = await withBudget(answer, compiled.timeoutMs);
      if (memo) {
        let byInput = known;
        if (!byInput) memo.set(compiled, (byInput = new Map()));
        byInput.set(memoKey(input), verdict);
      }
    } else {
      verdict = answer;
    }
    if (verdict.action === 'transform' && verdict.texts && verdict.texts.length !== input.texts.length) {
      throw new Error('a transform must return as many texts as it was given');
    }
  } catch (error) {
    failure = error instanceof Timeout ? 'timeout' : 'error';
    verdict =
      compiled.onError === 'fail-open'
        ? { action: 'allow' }
        : { action: 'deny', reason: `guardrail ${failure === 'timeout' ? `timed out after ${compiled.timeoutMs} ms` : 'failed'} (fail-closed)`, flagged: [] };
  }
  const flagged = flaggedBy(verdict, input.texts);
  return { verdict, ms: performance.now() - startedAt, ...(failure ? { failure, onError: compiled.onError } : {}), ...(flagged ? { flagged } : {}) };
}

function withBudget<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Timeout()), timeoutMs);
    timer.unref();
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}

/**
 * Runs a chain over `input`. Sequential: in chain order, each guardrail seeing the texts the ones
 * before it transformed, stopping at the first denial. Parallel: all at once on the same input; the
 * first denial in chain order wins; when several transform, the later ones are run again in chain
 * order on the rewritten texts so that transforms still compose. Every run is reported to `record`.
 * With a `memo` (one per request), an asynchronous check's verdict is reused for identical input.
 * `carried`, by chain position: what each guardrail's restorer kept from the conversation's earlier
 * turns, given to it as `input.carried`.
 */
export async function runChain(
  chain: readonly CompiledStep[],
  input: GuardrailInput,
  mode: 'sequential' | 'parallel',
  record: (entry: GuardrailRecord) => void,
  memo?: VerdictMemo,
  carried?: ReadonlyArray<string | null>,
): Promise<ChainOutcome> {
  const inputOf = (index: number, base: GuardrailInput): GuardrailInput => {
    const kept = carried?.[index];
    return typeof kept === 'string' ? { ...base, carried: kept } : base;
  };
  const report = (compiled: CompiledStep, result: StepResult) =>
    record({
      guardrail: compiled.id,
      side: input.side,
      // Transformed texts are not kept: the log records counts of what changed, never values.
      verdict: recorded(result.verdict),
      ms: result.ms,
      ...(result.failure ? { failure: result.failure, onError: result.onError } : {}),
      ...(result.cached ? { cached: 1 } : {}),
      // What it flagged travels apart from the verdict, for the log to mask (never to record).
      ...(result.flagged ? { flagged: result.flagged } : {}),
    });
  let texts = input.texts;
  let parameters = input.parameters;
  let transformed = false;
  const restorers: Restorer[] = [];
  const restorerSteps: number[] = [];
  const apply = (verdict: GuardrailVerdict & { action: 'transform' }, index: number) => {
    texts = verdict.texts ?? texts;
    parameters = { ...parameters, ...verdict.parameters };
    if (verdict.restorer) {
      restorers.push(verdict.restorer);
      restorerSteps.push(index);
    }
    transformed = true;
  };

  if (mode === 'parallel' && chain.length > 1) {
    const results = await Promise.all(chain.map((compiled, index) => runStep(compiled, inputOf(index, input), memo)));
    results.forEach((result, index) => report(chain[index], result));
    const denied = results.findIndex((result) => result.verdict.action === 'deny');
    if (denied !== -1) return { action: 'deny', guardrail: chain[denied].id, reason: (results[denied].verdict as { reason: string }).reason };
    const transforming = results.map((result, index) => (result.verdict.action === 'transform' ? index : -1)).filter((index) => index !== -1);
    if (transforming.length === 0) return { action: 'allow' };
    apply(results[transforming[0]].verdict as GuardrailVerdict & { action: 'transform' }, transforming[0]);
    for (const index of transforming.slice(1)) {
      const again = await runStep(chain[index], inputOf(index, { ...input, texts, parameters }), memo);
      if (again.verdict.action === 'deny') return { action: 'deny', guardrail: chain[index].id, reason: again.verdict.reason };
      if (again.verdict.action === 'transform') apply(again.verdict, index);
    }
    return { action: 'transform', texts, parameters, restorers, restorerSteps };
  }

  for (let index = 0; index < chain.length; index++) {
    const compiled = chain[index];
    const result = await runStep(compiled, inputOf(index, transformed ? { ...input, texts, parameters } : input), memo);
    report(compiled, result);
    if (result.verdict.action === 'deny') return { action: 'deny', guardrail: compiled.id, reason: result.verdict.reason };
    if (result.verdict.action === 'transform') apply(result.verdict, index);
  }
  return transformed ? { action: 'transform', texts, parameters, restorers, restorerSteps } : { action: 'allow' };
}

/** Merges a record into the one already kept for the same guardrail and side (stream windows). */
export function aggregate(records: GuardrailRecord[], entry: GuardrailRecord): void {
  const existing = records.find((record) => record.guardrail === entry.guardrail && record.side === entry.side);
  if (!existing) {
    records.push({ ...entry });
    return;
  }
  existing.ms += entry.ms;
  existing.checks = (existing.checks ?? 1) + 1;
  if (entry.failure) {
    existing.failure = entry.failure;
    existing.onError = entry.onError;
  }
  if (entry.cached) existing.cached = (existing.cached ?? 0) + entry.cached;
  if (entry.flagged) existing.flagged = existing.flagged ? [...existing.flagged, ...entry.flagged] : entry.flagged;
  const previous = existing.verdict;
  const next = entry.verdict;
  if (previous.action === 'deny') return;
  if (next.action === 'deny' || previous.action === 'allow') {
    existing.verdict = next;
  } else if (next.action === 'transform') {
    const changes: Record<string, number> = { ...previous.changes };
    for (const [kind, count] of Object.entries(next.changes)) changes[kind] = (changes[kind] ?? 0) + count;
    existing.verdict = { action: 'transform', changes };
  }
}
