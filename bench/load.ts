import autocannon from 'autocannon';
import type { ServerChild } from './children.js';
import { busyPercent, readMachineCpuTimes } from './machine.js';
import { mergePacedResults, PacedLoader, type PacedResult } from './paced-load.js';
import { RssSampler } from './rss.js';
import { median } from './stats.js';

/** The request every load sends. */
export interface LoadRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** One load: `connections` connections for `durationSeconds`, as fast as possible or at `overallRate` req/s. */
export interface LoadPlan {
  label: string;
  baseUrl: string;
  connections: number;
  durationSeconds: number;
  warmUpSeconds: number;
  overallRate?: number;
  /** How often the proxy's RSS is sampled during warm-up and load. */
  rssSampleMs: number;
}

/** What one measured load produced. CPU and memory are those of `proxy` (absent for direct loads). */
export interface LoadFigures {
  label: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  completed: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** How busy the whole machine (all cores, every process) was during the load, in percent. */
  machineBusyPercent: number;
  /** CPU over the measured load; RSS at its end and the largest sampled during warm-up and load. */
  proxy?: { role: string; cpuMicrosecondsPerRequest: number; cpuPercent: number; rssBytes: number; rssMaxBytes: number };
  /** Measured in alternating rounds ({@link mergeLoadSlices}): each round's req/s, in order. */
  rounds?: number[];
}

/** Extra time allowed beyond a load's duration before it counts as hung. */
const HANG_MARGIN_MS = 30_000;

function runAutocannon(plan: LoadPlan, request: LoadRequest, durationSeconds: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const instance = autocannon(
      {
        url: `${plan.baseUrl}${request.path}`,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        connections: plan.connections,
        duration: durationSeconds,
        timeout: 10,
        ...(plan.overallRate === undefined ? {} : { overallRate: plan.overallRate }),
      },
      (error, result) => {
        settled = true;
        clearTimeout(hang);
        if (error) reject(error);
        else resolve(result);
      },
    );
    const hang = setTimeout(() => {
      if (settled) return;
      instance.stop();
      reject(new Error(`load "${plan.label}" did not finish within ${durationSeconds} s + ${HANG_MARGIN_MS} ms`));
    }, durationSeconds * 1000 + HANG_MARGIN_MS);
  });
}

function statusCodesOf(result: autocannon.Result): Record<string, number> {
  const codes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) codes[code] = stats.count;
  return codes;
}

/**
 * Warms the target up, then runs the measured load with autocannon in this process, reading the
 * proxy process's CPU time just before and just after it and sampling its RSS throughout.
 */
export async function measureLoad(plan: LoadPlan, request: LoadRequest, proxy?: ServerChild): Promise<LoadFigures> {
  const sampler = proxy ? new RssSampler(() => proxy.rss(), plan.rssSampleMs).start() : undefined;
  if (plan.warmUpSeconds > 0) await runAutocannon(plan, request, plan.warmUpSeconds);
  const before = await proxy?.usage();
  const machineBefore = readMachineCpuTimes();
  const startedAt = performance.now();
  const result = await runAutocannon(plan, request, plan.durationSeconds);
  const wallMicroseconds = (performance.now() - startedAt) * 1000;
  const machineAfter = readMachineCpuTimes();
  const after = await proxy?.usage();
  const rss = await sampler?.stop();
  const completed = result.requests.total;
  const figures: LoadFigures = {
    label: plan.label,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    completed,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: statusCodesOf(result),
    machineBusyPercent: busyPercent(machineBefore, machineAfter),
  };
  if (proxy && before && after) {
    const cpuMicroseconds = after.cpuMicroseconds - before.cpuMicroseconds;
    figures.proxy = {
      role: proxy.role,
      cpuMicrosecondsPerRequest: completed > 0 ? cpuMicroseconds / completed : Number.NaN,
      cpuPercent: (100 * cpuMicroseconds) / wallMicroseconds,
      rssBytes: after.rssBytes,
      rssMaxBytes: Math.max(rss?.maxBytes ?? 0, after.rssBytes),
    };
  }
  return figures;
}

/**
 * One target's slices of a load measured in alternating rounds, as one figure: req/s and CPU per
 * request over all the slices (requests and CPU time summed; the slices are equally long), p50 and
 * p99 the median of the slices' (autocannon reports percentiles, which cannot be merged exactly),
 * counts summed, the largest RSS, and each round's req/s in `rounds`.
 */
export function mergeLoadSlices(slices: readonly LoadFigures[]): LoadFigures {
  if (slices.length === 0) throw new Error('mergeLoadSlices: no slices');
  if (slices.length === 1) return slices[0];
  const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
  const completed = sum(slices.map((slice) => slice.completed));
  const statusCodes: Record<string, number> = {};
  for (const slice of slices) for (const [code, count] of Object.entries(slice.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  const merged: LoadFigures = {
    label: slices[0].label,
    requestsPerSecond: sum(slices.map((slice) => slice.requestsPerSecond)) / slices.length,
    p50Ms: median(slices.map((slice) => slice.p50Ms)),
    p99Ms: median(slices.map((slice) => slice.p99Ms)),
    completed,
    non2xx: sum(slices.map((slice) => slice.non2xx)),
    errors: sum(slices.map((slice) => slice.errors)),
    timeouts: sum(slices.map((slice) => slice.timeouts)),
    statusCodes,
    machineBusyPercent: sum(slices.map((slice) => slice.machineBusyPercent)) / slices.length,
    rounds: slices.map((slice) => slice.requestsPerSecond),
  };
  const proxies = slices.map((slice) => slice.proxy).filter((proxy) => proxy !== undefined);
  if (proxies.length === slices.length) {
    const cpuMicroseconds = sum(slices.map((slice) => slice.proxy!.cpuMicrosecondsPerRequest * slice.completed));
    merged.proxy = {
      role: proxies[0].role,
      cpuMicrosecondsPerRequest: completed > 0 ? cpuMicroseconds / completed : Number.NaN,
      cpuPercent: sum(proxies.map((proxy) => proxy.cpuPercent)) / proxies.length,
      rssBytes: proxies[proxies.length - 1].rssBytes,
      rssMaxBytes: Math.max(...proxies.map((proxy) => proxy.rssMaxBytes)),
    };
  }
  return merged;
}

/** Each round's share of the floor (%), from two loads measured in the same alternating rounds; empty otherwise. */
export function roundShares(load: LoadFigures, floor: LoadFigures): number[] {
  if (!load.rounds || !floor.rounds || load.rounds.length !== floor.rounds.length) return [];
  return load.rounds.map((requestsPerSecond, index) => (100 * requestsPerSecond) / floor.rounds![index]);
}

/**
 * A load's share of the floor's req/s (%): the median of the rounds' shares when both were measured
 * in the same alternating rounds (each share taken between slices seconds apart), else the ratio.
 */
export function shareOfFloor(load: LoadFigures, floor: LoadFigures): number {
  const shares = roundShares(load, floor);
  return shares.length > 0 ? median(shares) : (100 * load.requestsPerSecond) / floor.requestsPerSecond;
}

/** One fixed-rate load with the paced load tool (sub-millisecond latencies). */
export interface PacedPlan {
  label: string;
  baseUrl: string;
  connections: number;
  ratePerSecond: number;
  durationSeconds: number;
  warmUpSeconds: number;
  rssSampleMs: number;
}

/** What one paced load produced; CPU and memory are those of `proxy`. */
export interface PacedFigures {
  label: string;
  result: PacedResult;
  machineBusyPercent: number;
  proxy: { role: string; cpuMicrosecondsPerRequest: number; cpuPercent: number; rssMaxBytes: number };
}

/**
 * Several paced loads measured in alternation: each target is warmed up, then `rounds` rounds each
 * give every target a slice of `durationSeconds / rounds`, in turn, so that a disturbance of the
 * shared machine (which moves p99 by milliseconds on this VM) falls on all targets alike rather than
 * on whichever ran at that moment. Latencies are merged over the slices; CPU time is summed.
 */
export async function measurePacedInterleaved(
  targets: ReadonlyArray<{ plan: PacedPlan; request: LoadRequest; proxy: ServerChild }>,
  rounds: number,
  /** The targets' indexes in a round's order (default: as given). */
  order: (round: number) => readonly number[] = () => targets.map((_target, index) => index),
): Promise<PacedFigures[]> {
  const states = targets.map(({ plan, request, proxy }) => ({
    plan,
    proxy,
    loader: new PacedLoader({ origin: plan.baseUrl, path: request.path, headers: request.headers, body: request.body }, plan.connections),
    sampler: new RssSampler(() => proxy.rss(), plan.rssSampleMs),
    results: [] as PacedResult[],
    cpuMicroseconds: 0,
    wallMicroseconds: 0,
    machine: [] as number[],
  }));
  try {
    for (const { plan, loader } of states) {
      if (plan.warmUpSeconds > 0) await withHangLimit(loader.run(plan.ratePerSecond, plan.warmUpSeconds), plan.warmUpSeconds, `${plan.label} (warm-up)`);
    }
    for (const state of states) state.sampler.start();
    for (let round = 0; round < rounds; round++) {
      for (const state of order(round).map((index) => states[index])) {
        const slice = state.plan.durationSeconds / rounds;
        const before = await state.proxy.usage();
        const machineBefore = readMachineCpuTimes();
        const startedAt = performance.now();
        state.results.push(await withHangLimit(state.loader.run(state.plan.ratePerSecond, slice), slice, state.plan.label));
        state.wallMicroseconds += (performance.now() - startedAt) * 1000;
        state.machine.push(busyPercent(machineBefore, readMachineCpuTimes()));
        state.cpuMicroseconds += (await state.proxy.usage()).cpuMicroseconds - before.cpuMicroseconds;
      }
    }
    const figures: PacedFigures[] = [];
    for (const state of states) {
      const result = mergePacedResults(state.results);
      const rss = await state.sampler.stop();
      figures.push({
        label: state.plan.label,
        result,
        machineBusyPercent: state.machine.reduce((sum, value) => sum + value, 0) / state.machine.length,
        proxy: {
          role: state.proxy.role,
          cpuMicrosecondsPerRequest: result.completed > 0 ? state.cpuMicroseconds / result.completed : Number.NaN,
          cpuPercent: (100 * state.cpuMicroseconds) / state.wallMicroseconds,
          rssMaxBytes: rss.maxBytes,
        },
      });
    }
    return figures;
  } finally {
    for (const state of states) {
      await state.sampler.stop();
      await state.loader.close();
    }
  }
}

function withHangLimit<T>(work: Promise<T>, durationSeconds: number, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`load "${label}" did not finish within ${durationSeconds} s + ${HANG_MARGIN_MS} ms`)), durationSeconds * 1000 + HANG_MARGIN_MS);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}
