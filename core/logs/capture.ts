import { Transform } from 'node:stream';
import { pipeInto } from '../http/pipe.js';
import type { BodyLogging } from '../../config/index.js';
import type { GatewayContext } from '../pipeline/context.js';
import type { Hook } from '../pipeline/hook.js';
import { type LogBodies, requestSecrets } from './entry.js';

/** Per-request switch: `x-gateway-log-bodies: false` (or `off`, `0`) keeps this request's bodies out of the log. */
export const LOG_BODIES_HEADER = 'x-gateway-log-bodies';

interface StreamCapture {
  chunks: Array<Uint8Array | string>;
  bytes: number;
  truncated: boolean;
}

const streams = new WeakMap<GatewayContext, StreamCapture>();

/**
 * Whether this request's bodies are logged: the configured switch or rule, the caller's key
 * (`log_bodies: false` wins over everything), the request's header, and JSON operations only.
 */
export function bodiesWanted(context: GatewayContext, policy: BodyLogging): boolean {
  if (policy === false || context.logBodies === false || context.operation === 'passthrough') return false;
  const header = context.incoming.headers[LOG_BODIES_HEADER]?.trim().toLowerCase();
  if (header === 'false' || header === 'off' || header === '0' || header === 'no') return false;
  return policy === true || policy({ caller: context.auth?.caller, metadata: context.metadata });
}

/**
 * Registered at the end of the auth stage, so that on the way out it sees the final answer
 * (after guardrails). A streamed answer gets a pass-through tap that keeps references to the
 * first `maxBytes` of what the client receives; nothing is copied or parsed on the request path.
 */
export function bodyCaptureHook(options: { policy: BodyLogging; maxBytes: number }): Hook {
  return {
    name: 'gateway-log-capture',
    stage: 'auth',
    async run(context, next) {
      await next();
      const body = context.response?.body;
      if (!body || !('stream' in body) || !bodiesWanted(context, options.policy)) return;
      const capture: StreamCapture = { chunks: [], bytes: 0, truncated: false };
      streams.set(context, capture);
      const tap = new Transform({
        transform(chunk: Uint8Array | string, _encoding, callback) {
          if (capture.bytes < options.maxBytes) {
            capture.chunks.push(chunk);
            capture.bytes += chunk.length;
          } else capture.truncated = true;
          callback(null, chunk);
        },
      });
      // The source is destroyed when the tap is (client gone), cancelling the upstream.
      context.response = { ...context.response!, body: { stream: pipeInto(body.stream, tap) } };
    },
  };
}

/** The bodies of a finished request, as references (serialised later by the writer). */
export function capturedBodies(context: GatewayContext, policy: BodyLogging): LogBodies | undefined {
  if (!bodiesWanted(context, policy)) return undefined;
  let response: LogBodies['response'];
  const body = context.response?.body;
  if (context.error) response = { json: context.error.toJSON() };
  else if (body && 'json' in body) response = body.serialised ? { json: body.json, serialised: body.serialised } : { json: body.json };
  else if (body && 'bytes' in body) response = { chunks: [body.bytes], truncated: false };
  else {
    const capture = streams.get(context);
    if (capture) response = { chunks: capture.chunks, truncated: capture.truncated };
  }
  return { request: context.request.raw, response, secrets: requestSecrets(context) };
}
