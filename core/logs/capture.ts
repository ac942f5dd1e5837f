import { type Readable, Transform } from 'node:stream';
import { pipeInto } from '../http/pipe.js';
import type { BodyLogging } from '../../config/index.js';
import type { GatewayContext } from '../pipeline/context.js';
import { type StreamTap, tapStream } from '../pipeline/response.js';
import type { Hook } from '../pipeline/hook.js';
import { flaggedValues, type LogBodies, requestSecrets } from './entry.js';
import { servedRequest } from '../routing/attempt.js';

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
  if (policy === false || context.key?.logBodies === false || context.operation === 'passthrough') return false;
  const header = context.incoming.headers[LOG_BODIES_HEADER]?.trim().toLowerCase();
  if (header === 'false' || header === 'off' || header === '0' || header === 'no') return false;
  return policy === true || policy({ caller: context.auth?.caller, metadata: context.metadata });
}

/**
 * The log's body capture. The log stage runs once the response is over, too late to see a stream
 * go by, so this hook belongs to the log but runs in the auth stage, once the caller is known: it
 * registers a tap that `writeResponse` puts on the streamed answer the client receives (after
 * guardrails), keeping references to its first `maxBytes` when this request's bodies are logged;
 * nothing is copied or parsed on the request path. `gateway-log` reads what it kept.
 */
export function bodyCaptureHook(options: { policy: BodyLogging; maxBytes: number }): Hook {
  // Whether bodies are wanted is asked only of a streamed answer, as the log asks it of every request.
  const tap: StreamTap = (stream, _response, context) => (bodiesWanted(context, options.policy) ? captureStream(context, stream, options.maxBytes) : stream);
  return {
    name: 'gateway-log-capture',
    stage: 'auth',
    after: ['gateway-auth'],
    // Not async: one tap shared by every request, and no promise of its own around next() (issue 21).
    run(context, next) {
      tapStream(context, tap);
      return next();
    },
  };
}

/** A pass-through tap keeping references to the first `maxBytes` of `stream` for the log. */
function captureStream(context: GatewayContext, stream: Readable, maxBytes: number): Readable {
  const capture: StreamCapture = { chunks: [], bytes: 0, truncated: false };
  streams.set(context, capture);
  const tap = new Transform({
    transform(chunk: Uint8Array | string, _encoding, callback) {
      if (capture.bytes < maxBytes) {
        capture.chunks.push(chunk);
        capture.bytes += chunk.length;
      } else capture.truncated = true;
      callback(null, chunk);
    },
  });
  // The source is destroyed when the tap is (client gone), cancelling the upstream.
  return pipeInto(stream, tap);
}

/** The bodies of a finished request, as references (serialised later by the writer). */
export function capturedBodies(context: GatewayContext, policy: BodyLogging): LogBodies | undefined {
  if (!bodiesWanted(context, policy)) return undefined;
  let response: LogBodies['response'];
  const body = context.response?.body;
  if (context.error) response = { json: context.error.toJSON() };
  else if (body && 'json' in body) response = body.serialised ? { json: body.json, serialised: body.serialised, serialisedText: body.serialisedText } : { json: body.json };
  else if (body && 'bytes' in body) response = { chunks: [body.bytes], truncated: false };
  else {
    const capture = streams.get(context);
    if (capture) response = { chunks: capture.chunks, truncated: capture.truncated };
  }
  const { raw, rawText, body: requestBody } = servedRequest(context);
  const flagged = flaggedValues(context);
  // What a guardrail flagged is masked in the stored text. The bytes as received may spell it with
  // JSON escapes (`\u0034`), so a flagged request is logged as its parsed body serialised again,
  // where a flagged value reads as JSON.stringify writes it.
  if (flagged && requestBody !== undefined) return { request: { json: requestBody }, response, secrets: requestSecrets(context), flagged };
  return { request: raw ?? (requestBody === undefined ? undefined : { json: requestBody }), requestText: raw === undefined ? undefined : rawText, response, secrets: requestSecrets(context), ...(flagged ? { flagged } : {}) };
}
