import { randomBytes } from 'node:crypto';
import test from 'ava';
import amqp from 'amqplib';
import { brokerReachable, firstOccurrences, throughOutage, waitFor } from '../../../test/logs/sink-harness.js';
import { rabbitmq } from './index.js';

// The RabbitMQ sink against the real broker on this machine (127.0.0.1:5672, guest/guest): 20 000
// requests through a gateway whose sink reaches the broker through a TCP proxy that is closed for
// the middle half of the run. Afterwards a consumer that deduplicates by messageId (as the sink's
// docs ask of consumers) has every entry once, in the order they were logged. The shared broker is
// never stopped; the queue is the test's own and is deleted after.

const BROKER = { host: '127.0.0.1', port: 5672 };
const TOTAL = 20_000;
const CONCURRENCY = 64;

const reachable = await brokerReachable(BROKER, 'RabbitMQ sink test skipped: no broker on 127.0.0.1:5672');

(reachable ? test.serial : test.skip)('20,000 requests reach RabbitMQ once each (consumer dedup by messageId) and in order, through an outage of the sink', async (t) => {
  t.timeout(300_000);
  const queue = `gateway-logsink-${randomBytes(6).toString('hex')}`;
  const direct = await amqp.connect(`amqp://guest:guest@${BROKER.host}:${BROKER.port}`);
  const channel = await direct.createChannel();
  await channel.assertQueue(queue, { durable: false, autoDelete: false });
  try {
    await throughOutage(t, {
      broker: BROKER,
      name: 'rabbitmq',
      sink: (port) => rabbitmq({ url: `amqp://127.0.0.1:${port}`, routingKey: queue, username: 'guest', password: 'guest', retryMs: 200, timeoutMs: 5000, queueCapacity: 2000 }),
      total: TOTAL,
      concurrency: CONCURRENCY,
      async check(gateway) {
        // The consumer: every message, deduplicated by messageId.
        const received: string[] = [];
        await channel.consume(
          queue,
          (message) => {
            if (!message) return;
            t.is(message.properties.messageId, (JSON.parse(message.content.toString()) as { id: string }).id);
            received.push(message.properties.messageId as string);
          },
          { noAck: true },
        );
        t.true(await waitFor(async () => new Set(received).size >= TOTAL, 120_000), `received ${new Set(received).size} distinct entries`);
        const { order, repeats } = firstOccurrences(received);
        t.is(order.length, TOTAL, 'every entry once after deduplication');
        t.deepEqual(order, gateway.written, 'the queue has the entries in the order they were logged');
        return { received: received.length, redelivered: repeats };
      },
    });
  } finally {
    await channel.deleteQueue(queue).catch(() => {});
    await direct.close().catch(() => {});
  }
});
