import type { EmbeddingRequest } from '../spec/unified.js';
import { invalid } from './validate.js';

/**
 * Input token limits of OpenAI's embedding models (per input). 8192 for every one of them: the API
 * spec names it for text-embedding-ada-002 and OpenAI's API reference gives it for all embedding
 * models. They tokenize with cl100k_base. These are model names, not provider names: the same models
 * served elsewhere (Azure OpenAI, OpenAI-compatible hosts) have the same limits.
 */
export const EMBEDDING_TOKEN_LIMITS: Readonly<Record<string, number>> = {
  'text-embedding-ada-002': 8192,
  'text-embedding-3-small': 8192,
  'text-embedding-3-large': 8192,
};

type WithinLimit = (text: string, limit: number) => false | number;
let tokenizer: Promise<WithinLimit> | undefined;

/** cl100k_base, loaded on first need (its rank table costs memory and ~100 ms that most gateways never need). */
function withinLimit(): Promise<WithinLimit> {
  tokenizer ??= import('gpt-tokenizer/encoding/cl100k_base').then(({ isWithinTokenLimit }) => {
    // Special-token text such as "<|endoftext|>" is ordinary text to the embeddings API.
    const options = { disallowedSpecial: new Set<string>() };
    return (text, limit) => isWithinTokenLimit(text, limit, options);
  });
  return tokenizer;
}

/**
 * Refuses an input longer than the model's token limit before anything is sent: token arrays by
 * their length, strings with the model's tokenizer. A cl100k token is at least one byte, so a
 * string whose UTF-8 length is within the limit cannot exceed it and is not tokenized at all; the
 * tokenizer stops counting as soon as the limit is passed.
 */
export async function checkEmbeddingTokenLimit(request: EmbeddingRequest): Promise<void> {
  const limit = EMBEDDING_TOKEN_LIMITS[request.model];
  if (limit === undefined) return;
  const input = request.input;
  const entries: Array<[value: string | number[], param: string]> =
    typeof input === 'string' || typeof input[0] === 'number'
      ? [[input as string | number[], 'input']]
      : (input as Array<string | number[]>).map((entry, index) => [entry, `input[${index}]`]);
  for (const [entry, param] of entries) {
    if (typeof entry !== 'string') {
      if (entry.length > limit) throw tooLong(param, request.model, limit, `${entry.length} tokens`);
    } else if (Buffer.byteLength(entry, 'utf8') > limit && (await withinLimit())(entry, limit) === false) {
      throw tooLong(param, request.model, limit, 'more');
    }
  }
}

const tooLong = (param: string, model: string, limit: number, got: string) =>
  invalid(param, `is longer than the ${limit}-token limit of ${model} (got ${got}). Shorten or split the input.`);
