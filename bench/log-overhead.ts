/**
 * Where the log stage's CPU goes: drives N chat requests through an in-process gateway (durable
 * log on, bodies on) against an in-process mock, for a CPU profile (`node --cpu-prof`).
 *
 *   npm run build && npx node --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/log-overhead.js
 *
 * GATEWAY_LOG_SEARCH=false runs it without the body search index (the time to store the backlog
 * after the last answer is printed too).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Pool } from 'undici';
import { createGateway } from '../core/app.js';
import { openai } from '../plugins/providers/openai/index.js';
import { sendChats, startChatMock } from './log-bench.js';

const TOTAL = Number(process.env.BENCH_REQUESTS ?? 20_000);
const mock = await startChatMock();
const mockUrl = mock.url;
const gateway = createGateway(
  { providers: [openai()] },
  {
    environment: { NODE_ENV: 'production', GATEWAY_API_KEY: 'gw-bench-key-0123456789abcdef', GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'log-overhead-')), GATEWAY_LOG_SEARCH: process.env.GATEWAY_LOG_SEARCH ?? 'true' },
    logDestination: pino.destination({ dest: '/dev/null', sync: false }),
  },
);
const { url } = await gateway.listen(0, '127.0.0.1');
const client = new Pool(url, { connections: 50 });
const statuses: Record<number, number> = {};
const started = performance.now();
const cpu = process.cpuUsage();
await sendChats(client, { key: 'gw-bench-key-0123456789abcdef', mockUrl }, TOTAL, (status) => (statuses[status] = (statuses[status] ?? 0) + 1));
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
const flushStarted = performance.now();
await gateway.flushLogs();
const flushed = (performance.now() - flushStarted) / 1000;
process.stdout.write(
  `${TOTAL} requests in ${seconds.toFixed(1)} s (${Math.round(TOTAL / seconds)} req/s), process CPU ${Math.round((used.user + used.system) / TOTAL)} µs/request (client, gateway, mock and log worker together), ${await gateway.logStore.count()} logged, the backlog stored ${flushed.toFixed(1)} s after the last answer (search index ${process.env.GATEWAY_LOG_SEARCH === 'false' ? 'off' : 'on'}), statuses ${JSON.stringify(statuses)}\n`,
);
await client.close();
await gateway.close();
mock.close();
