import { appendFileSync, chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { appendFile, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogRecord } from './record.js';

/** A segment grows to this size before the next one starts. */
const SEGMENT_BYTES = 4 * 1024 * 1024;
const NAME = /^segment-(\d{12})\.ndjson$/;
/** Spilled records hold request bodies: owner-only, like the log database. */
const FILE_MODE = 0o600;

/**
 * The append-only spill: log records that could not be written to the store (down or too slow),
 * as JSON lines in numbered segment files under the data dir. Records are appended until the
 * files together reach `maxBytes`; past that a record is dropped and counted. Replay takes the
 * oldest segment, whole, and deletes it once every record in it is stored.
 */
export class SpillFile {
  private sequence = 0;
  private currentBytes = 0;
  private total = 0;
  private readonly sealed: Array<{ path: string; bytes: number }> = [];

  constructor(
    readonly directory: string,
    private readonly maxBytes: number,
  ) {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    const names = readdirSync(directory)
      .filter((name) => NAME.test(name))
      .sort();
    // Segments left by an earlier run are replayed first.
    for (const name of names) {
      chmodSync(join(directory, name), FILE_MODE);
      const bytes = statSync(join(directory, name)).size;
      this.sealed.push({ path: join(directory, name), bytes });
      this.total += bytes;
      this.sequence = Math.max(this.sequence, Number(NAME.exec(name)![1]));
    }
    this.sequence++;
  }

  /** Bytes waiting to be replayed. */
  get bytes(): number {
    return this.total;
  }

  get isEmpty(): boolean {
    return this.total === 0;
  }

  private get currentPath(): string {
    return join(this.directory, `segment-${String(this.sequence).padStart(12, '0')}.ndjson`);
  }

  private seal(): void {
    if (this.currentBytes === 0) return;
    this.sealed.push({ path: this.currentPath, bytes: this.currentBytes });
    this.sequence++;
    this.currentBytes = 0;
  }

  /** Splits the records into the text that fits under the cap and the number that does not. */
  private fit(records: readonly LogRecord[]): { text: string; bytes: number; kept: number; dropped: number } {
    let text = '';
    let bytes = 0;
    let kept = 0;
    for (const record of records) {
      const line = `${JSON.stringify(record)}\n`;
      const size = Buffer.byteLength(line);
      if (this.total + bytes + size > this.maxBytes) continue;
      text += line;
      bytes += size;
      kept++;
    }
    return { text, bytes, kept, dropped: records.length - kept };
  }

  private account(bytes: number): void {
    this.currentBytes += bytes;
    this.total += bytes;
    if (this.currentBytes >= SEGMENT_BYTES) this.seal();
  }

  /** Appends; returns how many records were kept and how many dropped because the cap was reached. */
  async append(records: readonly LogRecord[]): Promise<{ kept: number; dropped: number }> {
    const { text, bytes, kept, dropped } = this.fit(records);
    if (kept > 0) {
      const path = this.currentPath;
      this.account(bytes); // before the await, so concurrent appends see the bytes
      await appendFile(path, text, { mode: FILE_MODE });
    }
    return { kept, dropped };
  }

  /** Synchronous append, for the overflow of a full in-memory queue and for shutdown. */
  appendSync(records: readonly LogRecord[]): { kept: number; dropped: number } {
    const { text, bytes, kept, dropped } = this.fit(records);
    if (kept > 0) {
      appendFileSync(this.currentPath, text, { mode: FILE_MODE });
      this.account(bytes);
    }
    return { kept, dropped };
  }

  /**
   * Replays the oldest segment through `insert` in batches, then deletes it. Throws (keeping the
   * segment) when an insert fails; records already inserted are inserted again on the next try,
   * which the stores ignore by id. Returns the records replayed and the lines that were unreadable.
   */
  async replayOldest(insert: (records: LogRecord[]) => Promise<void>, batchSize: number): Promise<{ replayed: number; unreadable: number }> {
    if (this.sealed.length === 0) this.seal();
    const segment = this.sealed[0];
    if (!segment) return { replayed: 0, unreadable: 0 };
    const text = await readFile(segment.path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    const records: LogRecord[] = [];
    let unreadable = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        records.push(JSON.parse(line) as LogRecord);
      } catch {
        unreadable++; // a line cut by a crash mid-write
      }
    }
    for (let index = 0; index < records.length; index += batchSize) await insert(records.slice(index, index + batchSize));
    await unlink(segment.path).catch(() => {});
    this.sealed.shift();
    this.total -= segment.bytes;
    return { replayed: records.length, unreadable };
  }
}
