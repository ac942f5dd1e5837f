import { readFileSync } from 'node:fs';

/** Resident memory of process `pid` in bytes from `/proc/<pid>/status`; undefined where that is not readable. */
export function readRssBytes(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(text);
  return match ? Number(match[1]) * 1024 : undefined;
}

/** RSS figures of one sampled window (bytes). */
export interface RssWindow {
  maxBytes: number;
  lastBytes: number;
  samples: number;
}

/**
 * Samples a process's RSS every `intervalMs` until stopped (read from outside the process, so the
 * sampling costs the measured process nothing), keeping the largest value seen.
 */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  private maxBytes = 0;
  private lastBytes = Number.NaN;
  private samples = 0;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly read: () => Promise<number>,
    private readonly intervalMs: number,
  ) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    return this;
  }

  /** Takes a last sample, stops, and returns the window's figures. */
  async stop(): Promise<RssWindow> {
    clearInterval(this.timer);
    this.sample();
    await this.pending;
    return { maxBytes: this.samples > 0 ? this.maxBytes : Number.NaN, lastBytes: this.lastBytes, samples: this.samples };
  }

  private sample(): void {
    this.pending = this.pending.then(async () => {
      try {
        const bytes = await this.read();
        this.samples++;
        this.lastBytes = bytes;
        this.maxBytes = Math.max(this.maxBytes, bytes);
      } catch {
        // the process has gone: the figures so far stand
      }
    });
  }
}
