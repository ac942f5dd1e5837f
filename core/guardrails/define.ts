import type { GuardrailInput, GuardrailManifest, GuardrailRegistration, GuardrailVerdict } from '../spec/guardrail.js';
import type { PluginDependencies } from '../spec/manifest.js';

/** A guardrail's judgement function, built once per policy entry from its params. */
export type GuardrailCheck = (input: GuardrailInput) => GuardrailVerdict | Promise<GuardrailVerdict>;

/**
 * Declares a guardrail plugin: its manifest and how an instance is built from typed params.
 * Returns the factory users call in `gateway.config.ts` (`pii({ ... })`); tsc checks the params'
 * type there, and the manifest's JSON Schema checks their values at boot.
 */
export function defineGuardrail<Params>(
  manifest: Omit<GuardrailManifest, 'kind'>,
  build: (params: Params, dependencies: PluginDependencies) => GuardrailCheck,
): ((params: Params) => GuardrailRegistration<Params>) & { readonly manifest: GuardrailManifest } {
  const full: GuardrailManifest = { ...manifest, kind: 'guardrail' };
  const factory = (params: Params): GuardrailRegistration<Params> => ({
    manifest: full,
    params,
    create(dependencies) {
      const check = build(params, dependencies);
      return { id: full.id, sides: full.stages, check };
    },
  });
  return Object.assign(factory, { manifest: full });
}

export const ALLOW: GuardrailVerdict = Object.freeze({ action: 'allow' });

/** A matched span of text, `kind` naming what it is (`email`, `card`, …). */
export interface Span {
  readonly start: number;
  readonly end: number;
  readonly kind: string;
}

/**
 * Finds the spans of `pattern` (which must have the `g` flag) in `text` that `accept` keeps. When
 * the text is `partial` (a stream still flowing), a span touching its end is left out: it may
 * continue in the next chunk, and the stream window holds it back until it is judged whole.
 */
export function findSpans(
  text: string,
  pattern: RegExp,
  kind: string,
  partial: boolean,
  /** Keeps (true), drops (false) or shortens (a length) a match. */
  accept?: (match: string) => boolean | number,
): Span[] {
  const spans: Span[] = [];
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match[0].length === 0) {
      pattern.lastIndex++;
      continue;
    }
    if (partial && match.index + match[0].length >= text.length) continue;
    const verdict = accept ? accept(match[0]) : true;
    if (verdict === false || verdict === 0) continue;
    spans.push({ start: match.index, end: match.index + (verdict === true ? match[0].length : verdict), kind });
  }
  return spans;
}

/** Spans sorted by start; of overlapping ones the first found (earlier in `spans`) is kept. */
export function disjoint(spans: readonly Span[]): Span[] {
  const kept: Span[] = [];
  for (const span of spans) {
    if (!kept.some((other) => span.start < other.end && other.start < span.end)) kept.push(span);
  }
  return kept.sort((left, right) => left.start - right.start);
}

/** Replaces disjoint, sorted spans. */
export function replaceSpans(text: string, spans: readonly Span[], replacement: (span: Span) => string): string {
  let out = '';
  let position = 0;
  for (const span of spans) {
    out += text.slice(position, span.start) + replacement(span);
    position = span.end;
  }
  return out + text.slice(position);
}

/** The values of the spans found in each text (`spans[i]` in `texts[i]`), for a verdict's `flagged`. */
export function spanValues(texts: readonly string[], spans: ReadonlyArray<readonly Span[]>): string[] {
  return spans.flatMap((found, index) => found.map((span) => texts[index].slice(span.start, span.end)));
}

/** Counts spans by kind (`{ email: 2 }`), for a transform's `changes`. */
export function countByKind(spans: readonly Span[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const span of spans) counts[span.kind] = (counts[span.kind] ?? 0) + 1;
  return counts;
}

/** Escapes text for use inside a RegExp. */
export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
