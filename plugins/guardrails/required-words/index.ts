import { ALLOW, defineGuardrail } from '../../../core/spec/index.js';
import { WORD_LIST_PARAMS, type WordListOptions, wordsPattern } from '../../shared/word-list.js';

export interface RequiredWordsParams extends WordListOptions {
  words: string[];
  /** `any` (default): at least one must appear; `all`: every one must. */
  match?: 'any' | 'all';
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
      properties: { ...WORD_LIST_PARAMS, match: { enum: ['any', 'all'] } },
    },
  },
  (params) => {
    const patterns = params.words.map((word) => wordsPattern([word], params));
    return (input) => {
      const text = input.texts.join('\n');
      const present = patterns.map((pattern) => {
        pattern.lastIndex = 0;
        return pattern.test(text);
      });
      const satisfied = params.match === 'all' ? present.every(Boolean) : present.some(Boolean);
      return satisfied ? ALLOW : { action: 'deny', reason: params.match === 'all' ? 'text lacks a required word' : 'text contains none of the required words', flagged: [] };
    };
  },
);
