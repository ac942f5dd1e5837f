import { PerformanceObserver } from 'node:perf_hooks';

/**
 * `BENCH_STALLS=1`: prints, with wall-clock times (ms since the epoch), every stall of this
 * process's event loop longer than 20 ms (a 5 ms timer that came late) and every garbage
 * collection longer than 5 ms, so that the slow requests a load tool reports can be matched with
 * the process (bench or gateway child) that paused, and why. Does nothing otherwise.
 */
export function watchStalls(label: string): void {
  if (process.env.BENCH_STALLS !== '1') return;
  const kinds: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration < 5) continue;
      const kind = kinds[((entry as { detail?: { kind?: number } }).detail)?.kind ?? 0] ?? 'gc';
      process.stderr.write(`stalls ${label}: gc ${kind} ${entry.duration.toFixed(1)} ms at ${Math.round(performance.timeOrigin + entry.startTime)}\n`);
    }
  }).observe({ entryTypes: ['gc'] });
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    if (now - last > 25) process.stderr.write(`stalls ${label}: event loop late ${(now - last - 5).toFixed(1)} ms, until ${Math.round(performance.timeOrigin + now)}\n`);
    last = now;
  }, 5).unref();
}
