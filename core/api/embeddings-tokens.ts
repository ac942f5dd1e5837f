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

export type WithinLimit = (text: string, limit: number) => false | number;
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

/** Characters tokenized at a time: BPE cost grows with the square of an unbroken run's length. */
const PIECE_CHARS = 1000;

/**
 * Whether a string surely has more than `limit` tokens. It is tokenized in pieces of at most
 * {@link PIECE_CHARS} characters, yielding to the event loop between pieces: whole, an 80,000-
 * character run without spaces took 3 s of one thread and 160,000 took 24 s (found by the fuzz
 * suite, issue 14). Pieces end before a space where there is one (where the tokenizer splits
 * anyway, so ordinary text is counted exactly); a cut inside a run costs at most the one token that
 * would have spanned it, so the pieces' counts minus the cuts is the lower bound compared: only an
 * input surely over the limit is refused, and the borderline rest is left for the provider.
 */
export async function surelyOverLimit(text: string, limit: number, count: WithinLimit): Promise<boolean> {
  let lowerBound = 0;
  let cutInRun = false;
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + PIECE_CHARS);
    const previousCutInRun = cutInRun;
    cutInRun = false;
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > start + PIECE_CHARS / 2) end = space;
      else {
        cutInRun = true;
        // Never cut a surrogate pair.
        if (/[\uD800-\uDBFF]/.test(text[end - 1])) end--;
      }
    }
    const pieceTokens = count(text.slice(start, end), Number.MAX_SAFE_INTEGER) as number;
    lowerBound += previousCutInRun ? pieceTokens - 1 : pieceTokens;
    if (lowerBound > limit) return true;
    start = end;
    if (start < text.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return false;
}

/**
 * Refuses an input longer than the model's token limit before anything is sent: token arrays by
 * their length, strings with the model's tokenizer. A cl100k token is at least one byte, so a
 * string whose UTF-8 length is within the limit cannot exceed it and is not tokenized at all.
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
    } else if (Buffer.byteLength(entry, 'utf8') > limit && (await surelyOverLimit(entry, limit, await withinLimit()))) {
      throw tooLong(param, request.model, limit, 'more');
    }
  }
}

const tooLong = (param: string, model: string, limit: number, got: string) =>
  invalid(`is longer than the ${limit}-token limit of ${model} (got ${got}). Shorten or split the input.`, { param });
