import {
  type ChatAdapter,
  type ChatChoice,
  type ChatCompletionChunk,
  type ChatRequest,
  type ChatResponse,
  type Clock,
  completionId,
  isRecord,
  MALFORMED_EVENT,
  nowSeconds,
  requireSingleChoice,
  type StreamStep,
  type Usage,
} from '../../../core/spec/index.js';
import { scopeOf, versionOf, type WatsonxDefaults } from './watsonx-target.js';

/**
 * The chat fields watsonx.ai's `text/chat` takes besides `messages` (IBM's API reference); any other
 * unified field is not sent (documented in docs/providers/watsonx.md).
 */
const CHAT_FIELDS = [
  'messages',
  'tools',
  'frequency_penalty',
  'presence_penalty',
  'logprobs',
  'top_logprobs',
  'max_tokens',
  'max_completion_tokens',
  'response_format',
  'seed',
  'stop',
  'temperature',
  'top_p',
  'time_limit',
] as const;

/** The request body: `model_id`, the project or space, the known fields; a string `tool_choice` travels as `tool_choice_option`. */
export function toWatsonxBody(request: ChatRequest, scope: { project_id: string } | { space_id: string }): Record<string, unknown> {
  const body: Record<string, unknown> = { model_id: request.model, ...scope };
  const fields = request as unknown as Record<string, unknown>;
  for (const field of CHAT_FIELDS) if (fields[field] !== undefined && fields[field] !== null) body[field] = fields[field];
  if (typeof request.tool_choice === 'string') body.tool_choice_option = request.tool_choice;
  else if (request.tool_choice !== undefined && request.tool_choice !== null) body.tool_choice = request.tool_choice;
  return body;
}

/** An answer without watsonx's own fields (`model_id`, `model_version`, `created_at`, `system`). */
export function fromWatsonxResponse(body: unknown, request: ChatRequest, clock?: Clock): ChatResponse {
  if (!isRecord(body) || !Array.isArray(body.choices)) throw new TypeError('watsonx chat response without choices');
  const model = typeof body.model === 'string' ? body.model : typeof body.model_id === 'string' ? body.model_id : request.model;
  return {
    id: typeof body.id === 'string' ? body.id : completionId(),
    object: 'chat.completion',
    created: typeof body.created === 'number' ? body.created : nowSeconds(clock),
    model,
    choices: body.choices as ChatChoice[],
    usage: isRecord(body.usage) ? (body.usage as unknown as Usage) : null,
  };
}

/**
 * `text/chat_stream` frames OpenAI-shaped chunks as `event: message` server-sent events without a
 * `[DONE]`: the last one is the usage chunk (`choices: []`), so that is the end; a stream closing
 * before it ended early.
 */
export function createWatsonxStreamMapper(request: ChatRequest): { map(event: { data: string }): StreamStep<ChatCompletionChunk> } {
  return {
    map(event) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        return { error: MALFORMED_EVENT };
      }
      if (!isRecord(parsed)) return {};
      if (Array.isArray(parsed.errors)) {
        const first = parsed.errors.find(isRecord);
        return { error: { message: typeof first?.message === 'string' ? first.message : 'watsonx.ai reported an error in the stream.', type: 'api_error', param: null, code: typeof first?.code === 'string' ? first.code : null } };
      }
      if (!Array.isArray(parsed.choices)) return {};
      const usage = isRecord(parsed.usage) ? (parsed.usage as unknown as Usage) : undefined;
      const chunk: ChatCompletionChunk = {
        id: typeof parsed.id === 'string' ? parsed.id : 'chatcmpl-watsonx',
        object: 'chat.completion.chunk',
        created: typeof parsed.created === 'number' ? parsed.created : 0,
        model: typeof parsed.model === 'string' ? parsed.model : typeof parsed.model_id === 'string' ? parsed.model_id : request.model,
        choices: parsed.choices as ChatCompletionChunk['choices'],
        ...(usage ? { usage } : {}),
      };
      return usage && parsed.choices.length === 0 ? { chunks: [chunk], done: true } : { chunks: [chunk] };
    },
  };
}

/** Chat through `POST /ml/v1/text/chat` (plain) and `POST /ml/v1/text/chat_stream` (streamed), `?version=<date>`. */
export function watsonxChat(defaults: WatsonxDefaults, clock?: Clock): ChatAdapter {
  return {
    validate(request) {
      requireSingleChoice(request.n, 'watsonx');
      return undefined;
    },
    toUpstream(request, target) {
      const path = request.stream ? 'chat_stream' : 'chat';
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: request.stream ? 'text/event-stream' : 'application/json' };
      const url = `${target.baseUrl}/ml/v1/text/${path}?version=${encodeURIComponent(versionOf(target, defaults))}`;
      return { method: 'POST', url, headers, body: JSON.stringify(toWatsonxBody(request, scopeOf(target, defaults))) };
    },
    fromUpstream: (body, request) => fromWatsonxResponse(body, request, clock),
    stream: { createMapper: (request) => createWatsonxStreamMapper(request) },
  };
}
