import { ALLOW, defineGuardrail } from '../../../core/spec/index.js';
import { wordsPattern } from '../banned-words/index.js';

export interface RequiredWordsParams {
  words: string[];
  /** `any` (default): at least one must appear; `all`: every one must. */
  match?: 'any' | 'all';
  wholeWord?: boolean;
  caseSensitive?: boolean;
}

/** Denies text that does not contain the listed words. Judges the whole text (a stream at its end). */
export const requiredWords = defineGuardrail<RequiredWordsParams>(
  {
    id: 'required-words',
    version: '1.0.0',
    description: 'Denies text that does not contain any (or all) of the listed words or phrases.',
    stages: ['input', 'output'],
    incremental: false,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['words'],
      properties: {
        words: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
        match: { enum: ['any', 'all'] },
        wholeWord: { type: 'boolean' },
        caseSensitive: { type: 'boolean' },
      },
    },
  },
  (params) => {
    const wholeWord = params.wholeWord ?? true;
    const caseSensitive = params.caseSensitive ?? false;
    const patterns = params.words.map((word) => wordsPattern([word], wholeWord, caseSensitive));
    return (input) => {
      const text = input.texts.join('\n');
      const present = patterns.map((pattern) => {
        pattern.lastIndex = 0;
        return pattern.test(text);
      });
      const satisfied = params.match === 'all' ? present.every(Boolean) : present.some(Boolean);
      return satisfied ? ALLOW : { action: 'deny', reason: params.match === 'all' ? 'text lacks a required word' : 'text contains none of the required words' };
    };
  },
);
