/**
 * The cost per request of one external log sink: two in-process gateways against one in-process
 * mock, one without sinks and one with a NATS JetStream sink (the real server on 127.0.0.1:4222,
 * a stream of its own, deleted after), driven in alternating rounds so that the machine's load
 * falls on both alike. Prints the process CPU per request of each (client, gateway, mock and the
 * sink's client together; the NATS server's own CPU is another process's) and the difference.
 *
 *   npm run bench:log-sinks            (BENCH_REQUESTS per round, default 5000; BENCH_ROUNDS, default 4)
 *
 * BENCH_SINK=noop measures the queue alone: a sink whose delivery does nothing (the records are
 * still built), so the difference to the NATS figure is the client library's share.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { Pool } from 'undici';
import { defineLogSink, type LogSinkRegistration } from '../core/spec/index.js';
import { createGateway } from '../core/app.js';
import { openai } from '../plugins/providers/openai/index.js';
import { nats } from '../plugins/sinks/nats/index.js';
import { sendChats, startChatMock } from './log-bench.js';

const PER_ROUND = Number(process.env.BENCH_REQUESTS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const KEY = 'gw-bench-key-0123456789abcdef';
const mock = await startChatMock();
const mockUrl = mock.url;

const suffix = randomBytes(6).toString('hex');
const stream = `BENCH_SINK_${suffix}`;
const subject = `bench.logs.${suffix}`;
const direct = await connect({ servers: '127.0.0.1:4222' });
const manager = await jetstreamManager(direct);
await manager.streams.add({ name: stream, subjects: [subject], storage: StorageType.Memory });

async function start(sinks: LogSinkRegistration[]) {
  const dataDir = mkdtempSync(join(tmpdir(), 'log-sinks-bench-'));
  const gateway = createGateway(
    { providers: [openai()], logs: { sinks } },
    { environment: { NODE_ENV: 'production', GATEWAY_API_KEY: KEY, GATEWAY_DATA_DIR: dataDir }, logDestination: pino.destination({ dest: '/dev/null', sync: false }) },
  );
  const { url } = await gateway.listen(0, '127.0.0.1');
  return { gateway, dataDir, client: new Pool(url, { connections: 50 }) };
}

const plain = await start([]);
const noop = defineLogSink<object>({ id: 'noop', version: '1.0.0', description: 'Delivers nowhere.' }, () => ({ deliver: async () => {} }));
const kind = process.env.BENCH_SINK === 'noop' ? 'no-op' : 'NATS';
const withSink = await start([kind === 'no-op' ? noop({}) : nats({ servers: '127.0.0.1:4222', subject })]);

async function round(client: Pool): Promise<number> {
  const cpu = process.cpuUsage();
  await sendChats(client, { key: KEY, mockUrl }, PER_ROUND);
  // The rounds' log work (the store's writer, the sink's deliveries) is counted in the round that made it.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / PER_ROUND;
}

await round(plain.client); // warm-up
await round(withSink.client);
const results = { plain: [] as number[], sink: [] as number[] };
for (let index = 0; index < ROUNDS; index++) {
  results.plain.push(await round(plain.client));
  results.sink.push(await round(withSink.client));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const stored = (await manager.streams.info(stream)).state.messages;
process.stdout.write(
  `${ROUNDS} alternating rounds of ${PER_ROUND} requests: no sink ${median(results.plain).toFixed(0)} µs/request, one ${kind} sink ${median(results.sink).toFixed(0)} µs/request ` +
    `(+${(median(results.sink) - median(results.plain)).toFixed(0)} µs, process CPU), rounds ${JSON.stringify(results, (_, value) => (typeof value === 'number' ? Math.round(value) : value))}; ${stored} entries in the stream\n`,
);
for (const side of [plain, withSink]) {
  await side.client.close();
  await side.gateway.close();
  rmSync(side.dataDir, { recursive: true, force: true });
}
await manager.streams.delete(stream).catch(() => {});
await direct.close();
mock.close();
