import { errors } from '../errors.js';
import { readBody, parseJsonObject } from '../http/body.js';
import { SseDecoder } from '../http/sse.js';
import type { GatewayResponse } from '../pipeline/context.js';
import type { ChatRequest, ChatResponse } from '../spec/unified.js';
import { validateChatRequest } from './chat-schema.js';
import { completionAsStream, relayChatStream } from './chat-stream.js';
import { strictChatResponse } from './chat-strict.js';
import { type OperationHandler, readUpstreamBody } from './operation.js';

const missing = (provider: string) =>
  errors.invalidRequest(`The provider "${provider}" does not support the operation "chat" (POST /v1/chat/completions).`, {
    param: 'x-gateway-provider',
    code: 'unsupported_operation',
  });

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/** `POST /v1/chat/completions`: plain and streamed. */
export const chatCompletions: OperationHandler = {
  name: 'chat',
  mapsErrors: true,

  async parse(request, options) {
    const raw = await readBody(request, options.bodyLimitBytes);
    const body = validateChatRequest(parseJsonObject(raw), options.strict);
    return { body, raw, model: body.model, streaming: body.stream === true };
  },

  toUpstream(context, provider, target) {
    const adapter = provider.operations.chat;
    if (!adapter || (context.request.streaming && !adapter.stream)) throw missing(provider.id);
    return adapter.toUpstream(context.request.body as ChatRequest, target, context.request.raw);
  },

  async respond(context, provider, forward): Promise<GatewayResponse> {
    const adapter = provider.operations.chat;
    const auth = context.auth;
    const transform = context.transform;
    if (!adapter || !auth || !transform) throw new Error('chat response without adapter, auth or transform slice');
    const request = context.request.body as ChatRequest;

    // Some OpenAI-compatible servers ignore `stream: true` and answer with one JSON completion.
    const answeredWithJson = String(forward.headers['content-type'] ?? '').startsWith('application/json');
    if (context.request.streaming && adapter.stream && !answeredWithJson) {
      const stream = adapter.stream;
      const body = relayChatStream({
        upstream: forward.body,
        origin: new URL(transform.upstreamRequest.url).origin,
        decoder: stream.createDecoder?.() ?? new SseDecoder(),
        mapper: stream.createMapper(request, auth.target),
        includeUsage: request.stream_options?.include_usage === true,
        strict: context.strict,
        signal: context.signal,
        provider: provider.id,
        transformer: context.guardrail?.output?.stream(),
        observe: {
          usage: (usage) => {
            transform.usage = usage;
          },
          model: (model) => {
            transform.model = model;
          },
          firstToken: () => {
            transform.firstTokenAt ??= performance.now();
          },
          end: (error) => {
            forward.endedAt = performance.now();
            if (error) transform.streamError = error;
          },
        },
      });
      return {
        status: 200,
        headers: SSE_HEADERS,
        body: { stream: body },
      };
    }

    const bytes = await readUpstreamBody(forward.body);
    forward.endedAt = performance.now();
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw errors.badGateway(`The provider "${provider.id}" answered with a body that is not JSON.`, { code: 'upstream_invalid_json' });
    }
    const mapped: ChatResponse = adapter.fromUpstream(parsed, request, auth.target);
    const response = context.guardrail?.output ? await context.guardrail.output.response(mapped) : mapped;
    if (response.usage) transform.usage = response.usage;
    if (response.model) transform.model = response.model;
    if (context.request.streaming) {
      const events = completionAsStream(response, request.stream_options?.include_usage === true, context.strict);
      return { status: 200, headers: SSE_HEADERS, body: { bytes: Buffer.from(events) } };
    }
    return { status: 200, headers: {}, body: { json: context.strict ? strictChatResponse(response) : response } };
  },
};
