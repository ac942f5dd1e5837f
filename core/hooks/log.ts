import { buildLogEntry, type LogSink } from '../logs/entry.js';
import type { Hook } from '../spec/hook.js';

/**
 * The log stage: runs once the response is complete (for streams, at their end), for every
 * request, and hands one {@link LogEntry} to each sink. Sinks queue; nothing here waits on I/O.
 */
export function logHook(dependencies: { sinks: readonly LogSink[] }): Hook {
  return {
    name: 'gateway-log',
    stage: 'log',
    async run(context, next) {
      const entry = buildLogEntry(context, performance.now());
      for (const sink of dependencies.sinks) sink.write(entry);
      await next();
    },
  };
}
