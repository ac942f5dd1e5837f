import type * as PromClient from 'prom-client';
import type { QuotaObserver } from '../quota/scheduler.js';
import { requireDependency } from '../require.js';

const Counter = requireDependency('prom-client/lib/counter') as typeof PromClient.Counter;
const Gauge = requireDependency('prom-client/lib/gauge') as typeof PromClient.Gauge;
const Histogram = requireDependency('prom-client/lib/histogram') as typeof PromClient.Histogram;

/** Distinct `quota` label values (credential ids, route targets); more are reported as `other`. */
export const MAX_QUOTA_LABELS = 200;

/** Seconds waited for a quota: from a window slide of a bucket (1 s) to the longest `max_wait_ms` (10 min). */
const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];

/**
 * The providers' quotas in `/metrics`: `gateway_quota_queue_depth{quota}` (requests waiting on this
 * instance), `gateway_quota_wait_seconds{quota,outcome}` (how long a request that queued waited:
 * granted, timeout, abort) and `gateway_quota_refusals_total{quota,reason}` (wait_exceeded, queue_full).
 */
export function quotaMetrics(registry: PromClient.Registry): QuotaObserver {
  const registers = [registry];
  const depth = new Gauge({ name: 'gateway_quota_queue_depth', help: "Requests waiting for a provider quota's room on this instance.", labelNames: ['quota'] as const, registers });
  const waits = new Histogram({
    name: 'gateway_quota_wait_seconds',
    help: 'How long a request queued for a provider quota waited, by outcome (granted, timeout, abort).',
    labelNames: ['quota', 'outcome'] as const,
    buckets: WAIT_BUCKETS,
    registers,
  });
  const refusals = new Counter({ name: 'gateway_quota_refusals_total', help: 'Requests refused by a provider quota (wait_exceeded: 429 after max_wait_ms; queue_full).', labelNames: ['quota', 'reason'] as const, registers });
  const labels = new Set<string>();
  const label = (key: string): string => {
    if (labels.has(key)) return key;
    if (labels.size >= MAX_QUOTA_LABELS) return 'other';
    labels.add(key);
    return key;
  };
  return {
    depth: (key, value) => depth.set({ quota: label(key) }, value),
    waited: (key, seconds, outcome) => waits.observe({ quota: label(key), outcome }, seconds),
    refused: (key, reason) => refusals.inc({ quota: label(key), reason }),
  };
}
