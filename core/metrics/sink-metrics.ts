import type * as PromClient from 'prom-client';
import type { SinkQueue, SinkQueueObserver } from '../logs/sink-queue.js';
import { requireDependency } from '../require.js';

const Counter = requireDependency('prom-client/lib/counter') as typeof PromClient.Counter;
const Gauge = requireDependency('prom-client/lib/gauge') as typeof PromClient.Gauge;

/**
 * The external log sinks' metrics, by `sink` (its configured name): entries delivered, spilled,
 * replayed and dropped (counters), and on scrape each queue's depth, spill bytes and whether the
 * sink is up.
 */
export class SinkMetrics {
  private readonly entries: PromClient.Counter<'sink' | 'result'>;
  private readonly dropped: PromClient.Counter<'sink' | 'reason'>;

  constructor(registry: PromClient.Registry, queues: () => readonly SinkQueue[]) {
    const registers = [registry];
    this.entries = new Counter({
      name: 'gateway_log_sink_entries_total',
      help: 'Log entries by external sink and what happened to them: delivered, spilled (to its spill directory), replayed (from it).',
      labelNames: ['sink', 'result'],
      registers,
    });
    this.dropped = new Counter({
      name: 'gateway_log_sink_entries_dropped_total',
      help: "Log entries an external sink lost: its spill directory full (spill_full), not writable (spill_unwritable), or a line cut by a crash (spill_unreadable).",
      labelNames: ['sink', 'reason'],
      registers,
    });
    const gauge = (name: string, help: string, value: (queue: SinkQueue) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['sink'],
        registers,
        collect() {
          for (const queue of queues()) this.set({ sink: queue.name }, value(queue));
        },
      });
    gauge('gateway_log_sink_queue_depth', 'Log entries waiting in memory for an external sink.', (queue) => queue.depth);
    gauge('gateway_log_sink_spill_bytes', "Bytes in an external sink's spill directory waiting for replay.", (queue) => queue.spillBytes);
    gauge('gateway_log_sink_up', '1 when the external sink took its last delivery.', (queue) => (queue.sinkUp ? 1 : 0));
  }

  /** The observer of one sink's queue. */
  observer(sink: string): SinkQueueObserver {
    for (const result of ['delivered', 'spilled', 'replayed']) this.entries.inc({ sink, result }, 0);
    this.dropped.inc({ sink, reason: 'spill_full' }, 0);
    return {
      delivered: (count) => this.entries.inc({ sink, result: 'delivered' }, count),
      spilled: (count) => this.entries.inc({ sink, result: 'spilled' }, count),
      replayed: (count) => this.entries.inc({ sink, result: 'replayed' }, count),
      dropped: (count, reason) => this.dropped.inc({ sink, reason }, count),
    };
  }
}
