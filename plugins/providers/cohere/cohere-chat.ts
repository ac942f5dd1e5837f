import type { ChatAdapter } from '../../../core/spec/index.js';
import { toCohereBody } from './cohere-request.js';
import { fromCohereResponse } from './cohere-response.js';
import { createCohereStreamMapper } from './cohere-stream.js';

/** Chat v2 (`POST /v2/chat`), plain and streamed (server-sent events). */
export const cohereChat: ChatAdapter = {
  toUpstream(request, target) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (request.stream) headers.accept = 'text/event-stream';
    return { method: 'POST', url: `${target.baseUrl}/chat`, headers, body: JSON.stringify(toCohereBody(request)) };
  },
  fromUpstream: fromCohereResponse,
  stream: { createMapper: createCohereStreamMapper },
};
