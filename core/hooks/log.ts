import type { BodyLogging } from '../../config/index.js';
import { capturedBodies } from '../logs/capture.js';
import { buildLogEntry, type LogSink } from '../logs/entry.js';
import type { Hook } from '../pipeline/hook.js';

/**
 * The log stage: runs once the response is complete (for streams, at their end), for every
 * request, and hands one {@link LogEntry} to each sink, with the request's bodies as references
 * when body logging is on (`bodies`). Sinks queue; nothing here waits on I/O.
 */
export function logHook(dependencies: { sinks: readonly LogSink[]; bodies?: BodyLogging }): Hook {
  return {
    name: 'gateway-log',
    stage: 'log',
    async run(context, next) {
      const entry = buildLogEntry(context, performance.now());
      const bodies = capturedBodies(context, dependencies.bodies ?? false);
      for (const sink of dependencies.sinks) sink.write(entry, bodies, context);
      await next();
    },
  };
}
