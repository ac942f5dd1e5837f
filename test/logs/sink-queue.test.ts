import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { LogEntry } from '../../core/logs/entry.js';
import { SinkQueue } from '../../core/logs/sink-queue.js';
import { SpillFile } from '../../core/logs/spill.js';
import type { LogSinkTarget, SinkRecord } from '../../core/spec/index.js';
import { resolveConfig } from '../../config/index.js';
import { defineLogSink } from '../../core/spec/index.js';
import { createGateway } from '../../core/app.js';
import { firstOccurrences } from './sink-harness.js';

const entry = (index: number): LogEntry => ({
  id: randomUUID(),
  time: new Date().toISOString(),
  traceId: `sink-${index}`,
  method: 'POST',
  path: '/v1/chat/completions',
  operation: 'chat',
  status: 200,
  outcome: 'ok',
  streaming: false,
  durationMs: 1,
  gatewayMs: 0.5,
  metadata: {},
  guardrails: [],
});

/** A sink whose deliveries the test controls: each waits for `release`, or fails while `failing`. */
class ScriptedSink implements LogSinkTarget {
  readonly received: SinkRecord[] = [];
  failing = false;
  /** When set, a delivery waits for it (a slow sink). */
  gate?: Promise<void>;
  deliveries = 0;
  async deliver(records: readonly SinkRecord[]): Promise<void> {
    this.deliveries++;
    if (this.gate) await this.gate;
    if (this.failing) throw new Error('sink down');
    this.received.push(...records);
  }
}

function setup(target: LogSinkTarget, options: { capacity?: number; spillMaxBytes?: number; directory?: string } = {}) {
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), 'sink-queue-'));
  const spill = new SpillFile(join(directory, 'spill'), options.spillMaxBytes ?? 1024 * 1024 * 1024);
  const dropped: number[] = [];
  const queue = new SinkQueue('test', target, spill, { batchSize: 10, capacity: options.capacity ?? 1000, retryMs: 20, timeoutMs: 2000, bodies: false, bodyMaxBytes: 1000, lingerMs: 0 }, {
    dropped: (count) => dropped.push(count),
  });
  queue.start();
  return { directory, queue, dropped };
}

test('a failed delivery spills the batch and what follows; the replay keeps the order and comes before newer entries', async (t) => {
  const sink = new ScriptedSink();
  const { queue, directory } = setup(sink);
  const entries = Array.from({ length: 100 }, (_, index) => entry(index));
  for (const item of entries.slice(0, 30)) queue.write(item);
  await queue.flush();
  sink.failing = true;
  for (const item of entries.slice(30, 70)) queue.write(item);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.true(queue.spillBytes > 0, 'the outage spilled');
  t.false(queue.sinkUp);
  sink.failing = false;
  for (const item of entries.slice(70)) queue.write(item);
  await queue.flush();
  t.deepEqual(firstOccurrences(sink.received.map((record) => record.id)).order, entries.map((item) => item.id));
  t.is(queue.totals.dropped, 0);
  t.true(queue.sinkUp);
  await queue.close();
  rmSync(directory, { recursive: true, force: true });
});

test('a full queue overflows with the batch in flight first: the order of first deliveries stays the order written', async (t) => {
  const sink = new ScriptedSink();
  let release!: () => void;
  sink.gate = new Promise((resolve) => (release = resolve));
  const { queue, directory } = setup(sink, { capacity: 25 });
  const entries = Array.from({ length: 80 }, (_, index) => entry(index));
  queue.write(entries[0]);
  // The first batch is now in flight, held by the gate; 79 more overflow the queue (capacity 25) to the spill directory.
  await new Promise((resolve) => setTimeout(resolve, 20));
  for (const item of entries.slice(1)) queue.write(item);
  t.true(queue.spillBytes > 0);
  sink.gate = undefined;
  release();
  await queue.flush();
  const { order, repeats } = firstOccurrences(sink.received.map((record) => record.id));
  t.deepEqual(order, entries.map((item) => item.id));
  t.true(repeats >= 1, 'the batch in flight was delivered and replayed (the sink deduplicates)');
  await queue.close();
  rmSync(directory, { recursive: true, force: true });
});

test('entries queued at close are spilled and delivered by the next start, before newer ones', async (t) => {
  const sink = new ScriptedSink();
  sink.failing = true;
  const first = setup(sink);
  const entries = Array.from({ length: 15 }, (_, index) => entry(index));
  for (const item of entries.slice(0, 10)) first.queue.write(item);
  await first.queue.close(50);
  t.is(sink.received.length, 0);
  sink.failing = false;
  const second = setup(sink, { directory: first.directory });
  for (const item of entries.slice(10)) second.queue.write(item);
  await second.queue.flush();
  t.deepEqual(firstOccurrences(sink.received.map((record) => record.id)).order, entries.map((item) => item.id));
  await second.queue.close();
  rmSync(first.directory, { recursive: true, force: true });
});

test('past the spill cap entries are dropped and counted', async (t) => {
  const sink = new ScriptedSink();
  sink.failing = true;
  const { queue, dropped, directory } = setup(sink, { spillMaxBytes: 2000 });
  for (let index = 0; index < 50; index++) queue.write(entry(index));
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.true(dropped.reduce((sum, count) => sum + count, 0) > 0);
  t.is(queue.totals.dropped, dropped.reduce((sum, count) => sum + count, 0));
  await queue.close(10);
  rmSync(directory, { recursive: true, force: true });
});

test('logs.sinks is checked at boot: names unique, a registration, its params against the schema', (t) => {
  const sink = defineLogSink<{ url: string }>(
    { id: 'example', version: '1.0.0', description: 'x', params: { type: 'object', required: ['url'], properties: { url: { type: 'string', pattern: '^https?://' } } } },
    () => ({ deliver: async () => {} }),
  );
  t.throws(() => resolveConfig({ providers: [], logs: { sinks: [sink({ url: 'http://a' }), sink({ url: 'http://b' })] } }, {}), { message: /used twice/ });
  t.throws(() => resolveConfig({ providers: [], logs: { sinks: [{} as never] } }, {}), { message: /not a log sink plugin/ });
  t.throws(() => resolveConfig({ providers: [], logs: { sinks: [sink({ url: 'http://a', name: 'Bad Name' })] } }, {}), { message: /name must be/ });
  const resolved = resolveConfig({ providers: [], logs: { sinks: [sink({ url: 'http://a', batchSize: 7, bodies: true }), sink({ url: 'http://b', name: 'second' })] } }, {});
  t.deepEqual(
    resolved.logs.sinks.map((item) => [item.name, item.batchSize, item.bodies]),
    [
      ['example', 7, true],
      ['second', 500, false],
    ],
  );
  const directory = mkdtempSync(join(tmpdir(), 'sink-boot-'));
  t.throws(() => createGateway({ providers: [], logs: { sinks: [sink({ url: 'ftp://x' })] } }, { environment: { GATEWAY_DATA_DIR: directory }, logDestination: { write: () => {} } }), {
    message: /log sink "example" \(example\)/,
  });
  rmSync(directory, { recursive: true, force: true });
});
