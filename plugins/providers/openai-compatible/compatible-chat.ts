import { type ChatAdapter, type ChatRequest, type ChatResponse, errors } from '../../../core/spec/index.js';
import type { ChatQuirks } from './compatible-manifest.js';
import { createCompatibleStreamMapper } from './compatible-stream.js';

/** Applies the quirks to a request; returns undefined when nothing had to change. */
export function adaptChatRequest(request: ChatRequest, quirks: ChatQuirks): Record<string, unknown> | undefined {
  const body: Record<string, unknown> = { ...request };
  let changed = false;
  const set = (field: string, value: unknown) => {
    if (value === undefined) delete body[field];
    else body[field] = value;
    changed = true;
  };

  if (request.stream) {
    if ((quirks.streamUsage ?? 'stream-options') === 'stream-options') {
      // The gateway always asks for usage (its log needs tokens); the relay drops the chunk again
      // for a client that did not ask.
      if (request.stream_options?.include_usage !== true) set('stream_options', { ...request.stream_options, include_usage: true });
    } else if (request.stream_options !== undefined) {
      set('stream_options', undefined);
    }
  }
  for (const field of quirks.unsupportedFields ?? []) if (field in body) set(field, undefined);
  for (const [from, to] of Object.entries(quirks.renamedFields ?? {})) {
    if (from in body) {
      const value = body[from];
      set(from, undefined);
      set(to, value);
    }
  }
  if (quirks.maxTokensOnly && body.max_completion_tokens !== undefined) {
    if (body.max_tokens === undefined) set('max_tokens', body.max_completion_tokens);
    set('max_completion_tokens', undefined);
  }
  if (quirks.maxTokensDefault !== undefined && body.max_tokens == null && body.max_completion_tokens == null) {
    set('max_tokens', quirks.maxTokensDefault);
  }
  if (quirks.noMessageNames && request.messages.some((message) => message.name !== undefined)) {
    set(
      'messages',
      request.messages.map(({ name: _name, ...message }) => message),
    );
  }
  return changed ? body : undefined;
}

/** The provider's own refusals of a valid unified request, as a 400 naming the field. */
export function checkChatRequest(request: ChatRequest, quirks: ChatQuirks, provider: string): undefined {
  if (quirks.n === false && typeof request.n === 'number' && request.n > 1) {
    throw errors.invalidRequest(`The provider "${provider}" returns one choice per request: n must be 1.`, { param: 'n', code: 'invalid_value' });
  }
  for (const field of quirks.unsupportedFields ?? []) {
    if (request[field] !== undefined && request[field] !== null) {
      throw errors.invalidRequest(`The provider "${provider}" does not support "${field}".`, { param: field, code: 'invalid_value' });
    }
  }
}

/**
 * The chat adapter of an OpenAI-compatible provider: the request goes up as sent (the client's
 * original bytes) unless a quirk changes it; answers are OpenAI-shaped already.
 */
export function compatibleChatAdapter(options: { provider: string; path?: string; quirks?: ChatQuirks }): ChatAdapter {
  const quirks = options.quirks ?? {};
  const path = options.path ?? '/chat/completions';
  return {
    toUpstream(request, target, original) {
      const adapted = adaptChatRequest(request, quirks);
      const body = adapted === undefined && original ? original : JSON.stringify(adapted ?? request);
      return { method: 'POST', url: `${target.baseUrl}${path}`, headers: { 'content-type': 'application/json' }, body };
    },

    fromUpstream(body) {
      const response = body as ChatResponse;
      if (typeof response !== 'object' || response === null || !Array.isArray(response.choices)) {
        throw new TypeError(`${options.provider} chat response without choices`);
      }
      return response;
    },

    validate: (request) => checkChatRequest(request, quirks, options.provider),

    stream: {
      createMapper: () => createCompatibleStreamMapper({ usageField: quirks.streamUsageField }),
    },
  };
}
