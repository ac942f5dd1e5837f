import { readFileSync } from 'node:fs';

/** Cumulative CPU time of the whole machine, all cores, in clock ticks (Linux `/proc/stat`). */
export interface MachineCpuTimes {
  busy: number;
  total: number;
}

/** Reads the machine's CPU times; undefined where `/proc/stat` does not exist. */
export function readMachineCpuTimes(): MachineCpuTimes | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/stat', 'utf8');
  } catch {
    return undefined;
  }
  const fields = text.split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  if (fields.length < 4 || fields.some((field) => Number.isNaN(field))) return undefined;
  // user nice system idle iowait irq softirq steal (guest time is already counted in user)
  const [user, nice, system, idle, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

/** Share of all cores' time spent busy between two readings, in percent; NaN when unknown. */
export function busyPercent(before: MachineCpuTimes | undefined, after: MachineCpuTimes | undefined): number {
  if (!before || !after || after.total <= before.total) return Number.NaN;
  return (100 * (after.busy - before.busy)) / (after.total - before.total);
}
