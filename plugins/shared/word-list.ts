import { escapeRegExp } from '../../core/spec/index.js';

/** How the word-list guardrails (`banned-words`, `required-words`) match their words. */
export interface WordListOptions {
  /** Match whole words only (default true): "ass" does not match "assistant". */
  readonly wholeWord?: boolean;
  /** Default false. */
  readonly caseSensitive?: boolean;
}

/** JSON Schema of the params every word-list guardrail takes: `words`, `wholeWord`, `caseSensitive`. */
export const WORD_LIST_PARAMS = {
  words: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
  wholeWord: { type: 'boolean' },
  caseSensitive: { type: 'boolean' },
};

/** A pattern matching any of `words` (longest first); whole-word boundaries are Unicode-aware (letters, marks, digits). */
export function wordsPattern(words: readonly string[], options: WordListOptions): RegExp {
  const alternatives = [...words].sort((left, right) => right.length - left.length).map(escapeRegExp).join('|');
  const source = options.wholeWord ?? true ? `(?<![\\p{L}\\p{M}\\p{N}_])(?:${alternatives})(?![\\p{L}\\p{M}\\p{N}_])` : `(?:${alternatives})`;
  return new RegExp(source, options.caseSensitive ? 'gu' : 'giu');
}
