import { SSE_DONE } from '../http/sse.js';
import { completionAnswerText } from './answer-text.js';
import type { CompletionChoice, CompletionResponse, Usage } from '../spec/unified.js';
import type { StreamableOperation } from './streamed-response.js';
import { chunkWithIdentity, sseChunk, type StreamShape } from './stream-relay.js';
import { pick, pickUsage } from './strict-fields.js';

/** OpenAI's text completion schema; streamed chunks have the same shape. */
const RESPONSE_FIELDS = ['id', 'object', 'created', 'model', 'choices', 'usage', 'system_fingerprint'];
const CHOICE_FIELDS = ['index', 'text', 'finish_reason', 'logprobs'];

export function strictCompletion(response: CompletionResponse): CompletionResponse {
  const strict = pick(response, RESPONSE_FIELDS);
  strict.choices = (response.choices ?? []).map((choice): CompletionChoice => pick(choice, CHOICE_FIELDS));
  pickUsage(strict);
  return strict;
}

const completionLike = (source: CompletionResponse | undefined, choices: CompletionChoice[], usage: Usage | null): CompletionResponse =>
  chunkWithIdentity<CompletionResponse>('text_completion', source, choices, usage);

export const completionStreamShape: StreamShape<CompletionResponse> = {
  strict: strictCompletion,
  usageChunk: (source, usage) => completionLike(source, [], usage),
};

/** A whole text completion as stream events: one chunk per choice, the usage chunk when asked for, `[DONE]`. */
export function textCompletionAsStream(response: CompletionResponse, includeUsage: boolean, strict: boolean): string {
  let out = '';
  for (const choice of response.choices) out += sseChunk(completionLike(response, [choice], null), completionStreamShape, strict);
  if (includeUsage && response.usage) out += sseChunk(completionLike(response, [], response.usage), completionStreamShape, strict);
  return out + SSE_DONE;
}

export const textCompletionStreaming: StreamableOperation<CompletionResponse, CompletionResponse> = {
  shape: completionStreamShape,
  strictResponse: strictCompletion,
  asStream: textCompletionAsStream,
  text: completionAnswerText,
};
