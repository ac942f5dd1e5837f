import type { ChatChoice, ChatChunkChoice, ChatCompletionChunk, ChatResponse } from '../spec/unified.js';
import { onlyFields, pick, pickUsage, USAGE_FIELDS } from './strict-fields.js';

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

/** True when the response holds only fields of the schema (then it is sent as it is, bytes included). */
function alreadyStrict(response: ChatResponse): boolean {
  if (!onlyFields(response, RESPONSE_FIELDS) || !Array.isArray(response.choices)) return false;
  if (response.usage && typeof response.usage === 'object' && !onlyFields(response.usage, USAGE_FIELDS)) return false;
  return response.choices.every(
    (choice) => onlyFields(choice, CHOICE_FIELDS) && (!choice.message || (typeof choice.message === 'object' && onlyFields(choice.message, MESSAGE_FIELDS))),
  );
}

/** The response with only the schema's fields: itself when it has no others. */
export function strictChatResponse(response: ChatResponse): ChatResponse {
  if (alreadyStrict(response)) return response;
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
