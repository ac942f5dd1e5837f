import type { ChatChoice, ChatChunkChoice, ChatCompletionChunk, ChatResponse } from '../spec/unified.js';

/**
 * `x-gateway-strict-api-compliance: true` (the default): responses carry only fields of OpenAI's
 * chat schema, so strict clients and typed SDKs never meet a provider's extras. These lists are that
 * schema (the API spec's fields plus OpenAI's current additions: refusal, annotations, audio,
 * service_tier, usage details).
 */
const RESPONSE_FIELDS = ['id', 'object', 'created', 'model', 'choices', 'usage', 'system_fingerprint', 'service_tier'];
const CHOICE_FIELDS = ['index', 'message', 'finish_reason', 'logprobs'];
const MESSAGE_FIELDS = ['role', 'content', 'refusal', 'tool_calls', 'function_call', 'annotations', 'audio'];
const CHUNK_CHOICE_FIELDS = ['index', 'delta', 'finish_reason', 'logprobs'];
const DELTA_FIELDS = ['role', 'content', 'refusal', 'tool_calls', 'function_call'];
const USAGE_FIELDS = ['prompt_tokens', 'completion_tokens', 'total_tokens', 'prompt_tokens_details', 'completion_tokens_details'];

function pick<T extends object>(value: T, fields: readonly string[]): T {
  const picked: Record<string, unknown> = {};
  for (const field of fields) {
    if (field in value) picked[field] = (value as Record<string, unknown>)[field];
  }
  return picked as T;
}

const pickUsage = <T extends { usage?: unknown }>(value: T): void => {
  if (value.usage && typeof value.usage === 'object') value.usage = pick(value.usage as object, USAGE_FIELDS);
};

export function strictChatResponse(response: ChatResponse): ChatResponse {
  const strict = pick(response, RESPONSE_FIELDS);
  strict.choices = (response.choices ?? []).map((choice): ChatChoice => {
    const picked = pick(choice, CHOICE_FIELDS);
    if (choice.message) picked.message = pick(choice.message, MESSAGE_FIELDS);
    return picked;
  });
  pickUsage(strict);
  return strict;
}

export function strictChatChunk(chunk: ChatCompletionChunk): ChatCompletionChunk {
  const strict = pick(chunk, RESPONSE_FIELDS);
  strict.choices = (chunk.choices ?? []).map((choice): ChatChunkChoice => {
    const picked = pick(choice, CHUNK_CHOICE_FIELDS);
    if (choice.delta) picked.delta = pick(choice.delta, DELTA_FIELDS);
    return picked;
  });
  pickUsage(strict);
  return strict;
}
