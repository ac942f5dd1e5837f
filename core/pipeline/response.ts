import type { GatewayContext, GatewayResponse, StreamTap } from './context.js';

export type { StreamTap };

/**
 * Registers a tap on this request's streamed answer, if it gets one. Hooks call it before `next()`,
 * as soon as they know they want to see the answer; the answer itself is written by
 * {@link writeResponse} alone.
 */
export function tapStream(context: GatewayContext, tap: StreamTap): void {
  if (context.taps) context.taps.push(tap);
  else context.taps = [tap];
}

/**
 * The one writer of `context.response`: sets the answer to send, with the registered taps applied
 * when it is a stream. Called by the transform stage with the operation's answer (its `respond`),
 * by the response cache with a replayed hit, and by the route with the error response.
 */
export function writeResponse(context: GatewayContext, response: GatewayResponse): void {
  const registered = context.taps;
  const body = response.body;
  if (registered === undefined || body === null || !('stream' in body)) {
    context.response = response;
    return;
  }
  let stream = body.stream;
  for (const tap of registered) stream = tap(stream, response, context);
  context.response = { ...response, body: { stream } };
}
