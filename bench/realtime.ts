// `npm run bench:realtime`: what the Realtime relay adds per event (issue 36: at most 1 ms at p99).
// One gateway (OpenAI provider, default config, its log written and stored), a loopback Realtime
// server and the client all run in this process, so one clock times every event: the sender stamps
// it, the receiver reads the stamp. One event is in flight at a time (a new one is sent when the
// last arrives), so the figure is latency, not queueing. Each round sends the same events directly
// to the server and through the gateway, alternately, in both directions: the provider's events to
// the client (80 % audio deltas of 100 ms of 24 kHz PCM16 in base64, 20 % text deltas, one
// `response.done` with usage every 50) and the client's to the provider (audio appends). The added
// latency is the gateway's p99 less the direct p99, per direction (median over rounds). Prints
// PASS/MISS against the 1 ms goal (a MISS does not fail the run).
import { mkdtempSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { createGateway } from '../core/app.js';
import { openai } from '../plugins/providers/openai/index.js';

const ROUNDS = 7;
const EVENTS = 1500;
const GOAL_MS = 1;
const ACCOUNT_KEY = 'gw-bench-realtime-0123456789';
const AUDIO = Buffer.alloc(4800).fill(7).toString('base64');

/** The server's event number `index`, stamped with the time it is sent. */
function serverEvent(index: number): string {
  const sent = performance.now();
  if (index % 50 === 49) {
    return JSON.stringify({ type: 'response.done', event_id: `e${index}`, sent, response: { id: 'resp_1', object: 'realtime.response', status: 'completed', output: [], usage: { total_tokens: 30, input_tokens: 10, output_tokens: 20 } } });
  }
  if (index % 5 === 4) return JSON.stringify({ type: 'response.output_text.delta', event_id: `e${index}`, sent, response_id: 'resp_1', item_id: 'item_1', output_index: 0, content_index: 0, delta: 'Hello there, ' });
  return JSON.stringify({ type: 'response.output_audio.delta', event_id: `e${index}`, sent, response_id: 'resp_1', item_id: 'item_1', output_index: 0, content_index: 0, delta: AUDIO });
}
const clientEvent = (index: number): string => JSON.stringify({ type: 'input_audio_buffer.append', event_id: `c${index}`, sent: performance.now(), audio: AUDIO });
const stampOf = (data: unknown): number => Number(/"sent":([0-9.]+)/.exec(String(data))?.[1]);

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const median = (values: number[]): number => percentile(values, 50);

/** Latencies of EVENTS events each way over one session opened at `url`. */
async function measure(url: string, headers: Record<string, string>, server: { next: () => Promise<WebSocket> }): Promise<{ down: number[]; up: number[]; cpuUsPerEvent: number }> {
  const socketPromise = server.next();
  const client = new WebSocket(url, { headers, perMessageDeflate: false });
  const upstream = await socketPromise;
  await once(client, 'open');
  // The session's opening event, as a provider sends it.
  upstream.send(JSON.stringify({ type: 'session.created', session: { model: 'gpt-realtime' } }));
  await once(client, 'message');
  const down: number[] = [];
  const cpu = process.cpuUsage();
  await new Promise<void>((resolve) => {
    client.on('message', (data) => {
      down.push(performance.now() - stampOf(data));
      if (down.length === EVENTS) resolve();
      else upstream.send(serverEvent(down.length));
    });
    upstream.send(serverEvent(0));
  });
  client.removeAllListeners('message');
  const up: number[] = [];
  await new Promise<void>((resolve) => {
    upstream.on('message', (data) => {
      up.push(performance.now() - stampOf(data));
      if (up.length === EVENTS) resolve();
      else client.send(clientEvent(up.length));
    });
    client.send(clientEvent(0));
  });
  const used = process.cpuUsage(cpu);
  client.close();
  await once(client, 'close');
  return { down, up, cpuUsPerEvent: (used.user + used.system) / (2 * EVENTS) };
}

async function main(): Promise<void> {
  const http = createServer();
  const sockets = new WebSocketServer({ server: http, perMessageDeflate: false });
  const waiting: Array<(socket: WebSocket) => void> = [];
  sockets.on('connection', (socket) => waiting.shift()?.(socket));
  const server = { next: () => new Promise<WebSocket>((resolve) => waiting.push(resolve)) };
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const origin = `127.0.0.1:${(http.address() as AddressInfo).port}`;
  const gateway = createGateway(
    { providers: [openai()] },
    { environment: { GATEWAY_API_KEY: ACCOUNT_KEY, GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'bench-realtime-')), LOG_LEVEL: 'info' }, logDestination: { write() {} } },
  );
  const { url } = await gateway.listen(0, '127.0.0.1');
  const direct = `ws://${origin}/v1/realtime?model=gpt-realtime`;
  const relayed = `${url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`;
  const headers = { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `http://${origin}/v1`, authorization: 'Bearer sk-bench' };

  // Warm-up: both paths, once.
  await measure(direct, {}, server);
  await measure(relayed, headers, server);
  const added = { down: [] as number[], up: [] as number[] };
  const cpuAdded: number[] = [];
  const p99 = { direct: { down: [] as number[], up: [] as number[] }, gateway: { down: [] as number[], up: [] as number[] } };
  for (let round = 0; round < ROUNDS; round++) {
    const first = await measure(direct, {}, server);
    const through = await measure(relayed, headers, server);
    cpuAdded.push(through.cpuUsPerEvent - first.cpuUsPerEvent);
    for (const side of ['down', 'up'] as const) {
      p99.direct[side].push(percentile(first[side], 99));
      p99.gateway[side].push(percentile(through[side], 99));
      added[side].push(percentile(through[side], 99) - percentile(first[side], 99));
    }
    process.stdout.write(
      `round ${round + 1}: provider→client p50 ${percentile(first.down, 50).toFixed(3)} / ${percentile(through.down, 50).toFixed(3)} ms, p99 ${percentile(first.down, 99).toFixed(3)} / ${percentile(through.down, 99).toFixed(3)} ms; ` +
        `client→provider p50 ${percentile(first.up, 50).toFixed(3)} / ${percentile(through.up, 50).toFixed(3)} ms, p99 ${percentile(first.up, 99).toFixed(3)} / ${percentile(through.up, 99).toFixed(3)} ms (direct / gateway)\n`,
    );
  }
  await gateway.close();
  sockets.close();
  http.close();
  const worst = Math.max(median(added.down), median(added.up));
  process.stdout.write(`realtime relay, ${ROUNDS} rounds of ${EVENTS} events each way (one in flight; 80 % ~6.4 KB audio deltas):\n`);
  process.stdout.write(`  provider→client p99: direct ${median(p99.direct.down).toFixed(3)} ms, gateway ${median(p99.gateway.down).toFixed(3)} ms, added ${median(added.down).toFixed(3)} ms\n`);
  process.stdout.write(`  client→provider p99: direct ${median(p99.direct.up).toFixed(3)} ms, gateway ${median(p99.gateway.up).toFixed(3)} ms, added ${median(added.up).toFixed(3)} ms\n`);
  process.stdout.write(`  CPU of this process per event: ${median(cpuAdded).toFixed(1)} µs more through the gateway (client, server and relay in one thread)\n`);
  process.stdout.write(`  load average while measured: ${loadavg().map((load) => load.toFixed(1)).join(' ')} on ${availableParallelism()} cores (a loaded machine stretches the tail of both paths)\n`);
  process.stdout.write(`  goal: at most ${GOAL_MS} ms added per event at p99: ${worst <= GOAL_MS ? 'PASS' : 'MISS'} (${worst.toFixed(3)} ms)\n`);
}

await main();
