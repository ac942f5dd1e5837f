import type { Logger } from 'pino';
import type { LogEntry, LogSink } from './entry.js';

/** Writes each entry as one pino JSON line at info level (`msg: "request"`). */
export class PinoLogSink implements LogSink {
  constructor(private readonly logger: Logger) {}

  write(entry: LogEntry): void {
    this.logger.info({ request: entry }, 'request');
  }
}
