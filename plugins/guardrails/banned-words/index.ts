import { ALLOW, defineGuardrail, escapeRegExp, findSpans } from '../../../core/spec/index.js';

export interface BannedWordsParams {
  words: string[];
  /** Match whole words only (default true): "ass" does not match "assistant". */
  wholeWord?: boolean;
  /** Default false. */
  caseSensitive?: boolean;
}

/** A pattern matching any of `words`; whole-word boundaries are Unicode-aware (letters, marks, digits). */
export function wordsPattern(words: readonly string[], wholeWord: boolean, caseSensitive: boolean): RegExp {
  const alternatives = [...words].sort((left, right) => right.length - left.length).map(escapeRegExp).join('|');
  const source = wholeWord ? `(?<![\\p{L}\\p{M}\\p{N}_])(?:${alternatives})(?![\\p{L}\\p{M}\\p{N}_])` : `(?:${alternatives})`;
  return new RegExp(source, caseSensitive ? 'gu' : 'giu');
}

/** Denies text that contains any of the listed words. */
export const bannedWords = defineGuardrail<BannedWordsParams>(
  {
    id: 'banned-words',
    version: '1.0.0',
    description: 'Denies text that contains any of the listed words or phrases (whole-word and case options).',
    stages: ['input', 'output'],
    incremental: true,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['words'],
      properties: {
        words: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
        wholeWord: { type: 'boolean' },
        caseSensitive: { type: 'boolean' },
      },
    },
  },
  (params) => {
    const pattern = wordsPattern(params.words, params.wholeWord ?? true, params.caseSensitive ?? false);
    return (input) => {
      const found = input.texts.some((text) => findSpans(text, pattern, 'word', input.partial).length > 0);
      return found ? { action: 'deny', reason: 'text contains a banned word' } : ALLOW;
    };
  },
);
