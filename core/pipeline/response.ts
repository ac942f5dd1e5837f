import type { Readable } from 'node:stream';
import type { GatewayContext, GatewayResponse } from './context.js';

/**
 * Sees (and passes on unchanged) the bytes of a streamed answer on their way to the client: the
 * log's body capture, the limits' usage reader. Returns the stream the client is sent.
 */
export type StreamTap = (stream: Readable, response: GatewayResponse) => Readable;

/** Taps registered per request, applied by {@link respond} in registration order. */
const taps = new WeakMap<GatewayContext, StreamTap[]>();

/**
 * Registers a tap on this request's streamed answer, if it gets one. Hooks call it before `next()`,
 * as soon as they know they want to see the answer; the answer itself is written by
 * {@link respond} alone.
 */
export function tapStream(context: GatewayContext, tap: StreamTap): void {
  const registered = taps.get(context);
  if (registered) registered.push(tap);
  else taps.set(context, [tap]);
}

/**
 * The one writer of `context.response`: sets the answer to send, with the registered taps applied
 * when it is a stream. Called by the transform stage with the operation's answer, and by the route
 * with the error response.
 */
export function respond(context: GatewayContext, response: GatewayResponse): void {
  const registered = taps.get(context);
  const body = response.body;
  if (registered === undefined || body === null || !('stream' in body)) {
    context.response = response;
    return;
  }
  let stream = body.stream;
  for (const tap of registered) stream = tap(stream, response);
  context.response = { ...response, body: { stream } };
}
