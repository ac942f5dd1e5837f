import { ALLOW, defineGuardrail, findSpans, spanValues } from '../../../core/spec/index.js';
import { WORD_LIST_PARAMS, type WordListOptions, wordsPattern } from '../../shared/word-list.js';

export interface BannedWordsParams extends WordListOptions {
  words: string[];
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
      properties: WORD_LIST_PARAMS,
    },
  },
  (params) => {
    const pattern = wordsPattern(params.words, params);
    return (input) => {
      const found = input.texts.map((text) => findSpans(text, pattern, 'word', input.partial));
      return found.some((spans) => spans.length > 0) ? { action: 'deny', reason: 'text contains a banned word', flagged: spanValues(input.texts, found) } : ALLOW;
    };
  },
);
