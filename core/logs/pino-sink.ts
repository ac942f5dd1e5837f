import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { entryJson, type LogEntry, type LogSink } from './entry.js';

/**
 * Request lines held for the current turn of the event loop, written to the log's destination
 * together: one write per turn instead of one per request. sonic-boom (pino's asynchronous
 * destination) measures the byte length of its whole pending string on every write, flattening it
 * again each time; a turn's lines joined once are measured once.
 *
 * Held lines are never lost on the ways out a process has: the turn's own `setImmediate` writes
 * them; a line pino writes itself (a warning, an error) takes them first, so the order of lines is
 * the order they were logged; `flush()` (also through the logger's `flush`) writes them at once; and
 * on `exit` (`process.exit()`, an uncaught exception, the loop running out of work) and `beforeExit`
 * they are written and the destination flushed synchronously, like pino's own exit handlers do.
 */
export class HeldLines {
  private pending = '';
  private readonly writeBound = () => this.flush();

  constructor(private readonly destination: DestinationStream) {}

  /** Holds one complete line (ending with a newline) until the end of this turn. */
  add(line: string): void {
    if (this.pending === '') {
      held.add(this);
      setImmediate(this.writeBound);
    }
    this.pending += line;
  }

  /** pino's `streamWrite` hook: a line pino writes goes out after the lines held before it. */
  readonly before = (line: string): string => {
    if (this.pending === '') return line;
    const text = this.pending + line;
    this.pending = '';
    held.delete(this);
    return text;
  };

  /** Writes the held lines to the destination now. */
  flush(): void {
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    held.delete(this);
    this.destination.write(text);
  }

  /** Writes the held lines and, when the destination can, flushes it synchronously (process exit). */
  flushSync(): void {
    try {
      this.flush();
      (this.destination as { flushSync?: () => void }).flushSync?.();
    } catch {
      // A destination that is closed or not open yet: nothing more can be written on the way out.
    }
  }
}

/** Every {@link HeldLines} holding lines right now (so exiting writes them; none is kept once written). */
const held = new Set<HeldLines>();
const writeAllHeld = () => {
  for (const lines of [...held]) lines.flushSync();
};
process.on('exit', writeAllHeld);
process.on('beforeExit', writeAllHeld);

/**
 * The gateway's pino logger, with the request lines held per turn ({@link HeldLines}) on the same
 * destination. The logger's `flush` writes the held lines first.
 */
export function loggerWithHeldLines(options: Omit<LoggerOptions, 'hooks'>, destination: DestinationStream): { logger: Logger; lines: HeldLines } {
  const lines = new HeldLines(destination);
  const logger = pino({ ...options, hooks: { streamWrite: lines.before } }, destination);
  const flush = logger.flush.bind(logger);
  logger.flush = (callback?: (error?: Error) => void) => {
    lines.flush();
    flush(callback);
  };
  return { logger, lines };
}

/**
 * Writes each entry as one pino JSON line at info level (`msg: "request"`), the line pino writes
 * for `logger.info({ request: entry }, 'request')` with the gateway's options (no base fields, epoch
 * time), built here in one string and held for the turn's write ({@link HeldLines}).
 */
export class PinoLogSink implements LogSink {
  constructor(
    private readonly logger: Logger,
    private readonly lines?: HeldLines,
  ) {}

  write(entry: LogEntry): void {
    if (!this.lines) {
      this.logger.info({ request: entry }, 'request');
      return;
    }
    if (!this.logger.isLevelEnabled('info')) return;
    let json: string;
    try {
      json = entryJson(entry);
    } catch {
      // Not plain JSON (cannot happen for a built entry): pino's own serialiser copes.
      this.logger.info({ request: entry }, 'request');
      return;
    }
    this.lines.add(`{"level":30,"time":${Date.now()},"request":${json},"msg":"request"}\n`);
  }
}
