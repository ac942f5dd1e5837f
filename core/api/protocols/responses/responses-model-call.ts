import { errors, GatewayError } from '../../../errors.js';
import type { GatewayContext } from '../../../pipeline/context.js';
import type { Pipeline } from '../../../pipeline/runner.js';
import type { ResponseEvent, ResponseObject, ResponsesRequest } from '../../../spec/responses.js';

/** Reads the events of a Responses SSE stream, one at a time. */
async function* sseEvents(stream: AsyncIterable<Buffer | string>): AsyncGenerator<ResponseEvent> {
  let pending = '';
  for await (const chunk of stream) {
    pending += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    let end = pending.indexOf('\n\n');
    while (end !== -1) {
      const block = pending.slice(0, end);
      pending = pending.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data !== '' && data !== '[DONE]') yield JSON.parse(data) as ResponseEvent;
      end = pending.indexOf('\n\n');
    }
  }
}

/** The error a stream's `error` or failed terminal event carries, as a gateway error. */
function streamError(event: ResponseEvent): GatewayError {
  const failure = (event.type === 'error' ? event : (event.response as ResponseObject | undefined)?.error) as { message?: unknown; code?: unknown } | null | undefined;
  return errors.badGateway(typeof failure?.message === 'string' ? failure.message : 'The model call failed.', { code: typeof failure?.code === 'string' ? failure.code : 'upstream_error' });
}

/**
 * One model call of the `mcp` tool loop (docs/mcp.md): a Responses request run through the whole
 * pipeline as a request of its own, with the client's headers (so the same key authenticates it,
 * its limits admit it, its guardrails judge it and it is logged and charged as any model call) and
 * the client request's trace id (so every step of the loop is found under one trace). A streamed
 * call hands each event to `onEvent` as it comes. Resolves with the finished Response; an error
 * answer or a failed stream rejects with the gateway error.
 */
export async function runModelCall(pipeline: Pipeline, outer: GatewayContext, body: ResponsesRequest, onEvent?: (event: ResponseEvent) => void): Promise<ResponseObject> {
  const rawText = JSON.stringify(body);
  const streaming = body.stream === true;
  const context: GatewayContext = {
    traceId: outer.traceId,
    startedAt: performance.now(),
    operation: 'responses',
    incoming: outer.incoming,
    signal: outer.signal,
    metadata: outer.metadata,
    strict: outer.strict,
    request: { streaming },
    loadRequest: async () => {
      context.request = { body, raw: Buffer.from(rawText), rawText, model: body.model, streaming };
    },
  };
  try {
    await pipeline.run(context);
    if (context.error) throw context.error;
    const answer = context.response?.body;
    if (!answer) throw errors.badGateway('The model call gave no answer.', { code: 'upstream_error' });
    if ('json' in answer) return answer.json as ResponseObject;
    if ('bytes' in answer) return JSON.parse(Buffer.from(answer.bytes).toString('utf8')) as ResponseObject;
    let finished: ResponseObject | undefined;
    for await (const event of sseEvents(answer.stream as AsyncIterable<Buffer>)) {
      if (event.type === 'error' || event.type === 'response.failed') throw streamError(event);
      if (event.type === 'response.completed' || event.type === 'response.incomplete') finished = event.response as ResponseObject;
      onEvent?.(event);
    }
    if (!finished) throw errors.badGateway('The model call ended before its response was complete.', { code: 'upstream_error' });
    return finished;
  } finally {
    context.forward?.memory.release();
    void pipeline.complete(context);
    void context.request.cleanup?.().catch(() => {});
  }
}
