import { randomBytes } from 'node:crypto';
import test from 'ava';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { brokerReachable, firstOccurrences, throughOutage, waitFor } from '../../../test/logs/sink-harness.js';
import { nats } from './index.js';

// The NATS JetStream sink against the real server on this machine (127.0.0.1:4222): 20 000 requests
// through a gateway whose sink reaches the server through a TCP proxy that is closed for the middle
// half of the run. Afterwards the stream holds every entry once, in the order they were logged.
// The shared server is never stopped: the proxy is what goes down. The stream is the test's own.

const BROKER = { host: '127.0.0.1', port: 4222 };
const TOTAL = 20_000;
const CONCURRENCY = 64;

const reachable = await brokerReachable(BROKER, 'NATS sink test skipped: no NATS server on 127.0.0.1:4222');

async function readAll(connection: NatsConnection, stream: string, count: number): Promise<string[]> {
  const consumer = await jetstream(connection).consumers.get(stream);
  const messages = await consumer.consume();
  const ids: string[] = [];
  for await (const message of messages) {
    ids.push((message.json() as { id: string }).id);
    if (ids.length >= count) break;
  }
  await messages.close();
  return ids;
}

(reachable ? test.serial : test.skip)('20,000 requests reach JetStream once each and in order, through an outage of the sink', async (t) => {
  t.timeout(300_000);
  const suffix = randomBytes(6).toString('hex');
  const stream = `LOGSINK_${suffix}`;
  const subject = `gateway.logs.${suffix}`;
  const direct = await connect({ servers: `${BROKER.host}:${BROKER.port}` });
  const manager = await jetstreamManager(direct);
  await manager.streams.add({ name: stream, subjects: [subject], storage: StorageType.Memory, duplicate_window: 10 * 60 * 1e9 });
  try {
    await throughOutage(t, {
      broker: BROKER,
      name: 'nats',
      sink: (port) => nats({ servers: `127.0.0.1:${port}`, subject, retryMs: 200, timeoutMs: 5000, queueCapacity: 2000 }),
      total: TOTAL,
      concurrency: CONCURRENCY,
      async check(gateway) {
        const stored = async () => (await manager.streams.info(stream)).state.messages;
        t.true(await waitFor(async () => (await stored()) >= TOTAL, 120_000), `the stream holds ${await stored()} messages`);
        t.is(await stored(), TOTAL, 'no entry twice (Nats-Msg-Id)');
        const ids = await readAll(direct, stream, TOTAL);
        const { order, repeats } = firstOccurrences(ids);
        t.is(repeats, 0);
        t.is(order.length, TOTAL);
        t.deepEqual(order, gateway.written, 'the stream has the entries in the order they were logged');
      },
    });
  } finally {
    await manager.streams.delete(stream).catch(() => {});
    await direct.close();
  }
});
