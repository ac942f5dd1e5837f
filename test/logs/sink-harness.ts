import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { LogSinkRegistration } from '../../core/spec/index.js';
import { createGateway, type Gateway } from '../../core/app.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { ACCOUNT_KEY, sdkClient } from '../harness.js';

// What the external sinks' end-to-end tests share: a fast loopback provider, a gateway whose only
// extra sink is the one under test (its entries' write order recorded), a TCP proxy in front of a
// real broker that the test closes for part of the run (the shared brokers are never stopped),
// the driver of N requests with hooks at given counts, and the brokers' outage run built on them.

const COMPLETION = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'fast',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

/** A provider answering every request at once with `completion` (the shared fake records every request, which 20 000 would pile up). */
export async function fastProvider(completion = COMPLETION): Promise<{ url: string; close(): void }> {
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(completion));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A TCP proxy to `target`: `down()` cuts every connection and refuses new ones, `up()` accepts again on the same port. */
export class TcpProxy {
  private server?: TcpServer;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async up(): Promise<void> {
    const server = createTcpServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export interface SinkGateway {
  readonly gateway: Gateway;
  readonly url: string;
  /** Entry ids in the order the log stage wrote them to the sinks. */
  readonly written: string[];
  /** What pino wrote other than the request lines (warnings, errors), for secret scans. */
  readonly otherLines: string[];
  close(): Promise<void>;
}

/** A gateway with `sink` as its one configured external sink, its pino output discarded. */
export async function sinkGateway(sink: LogSinkRegistration, logs: Record<string, unknown> = {}): Promise<SinkGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-sink-'));
  const written: string[] = [];
  const otherLines: string[] = [];
  const gateway = createGateway(
    { providers: [openai()], logs: { sinks: [sink], ...logs } },
    {
      environment: { GATEWAY_API_KEY: ACCOUNT_KEY, GATEWAY_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
      logDestination: { write: (text: string) => void (text.includes('"msg":"request"') || otherLines.push(text)) },
      sinks: [{ write: (entry) => void written.push(entry.id) }],
    },
  );
  const { url } = await gateway.listen(0, '127.0.0.1');
  return {
    gateway,
    url,
    written,
    otherLines,
    async close() {
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Sends `total` chat requests, `concurrency` at a time; runs the hook registered at each count of answers. */
export async function drive(url: string, providerUrl: string, total: number, concurrency: number, hooks: Record<number, () => Promise<void> | void>): Promise<{ seconds: number }> {
  const client = sdkClient(url, providerUrl);
  let next = 0;
  let answered = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total) {
      next++;
      await client.chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
      answered++;
      const hook = hooks[answered];
      if (hook) await hook();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { seconds: (performance.now() - started) / 1000 };
}

/** The sink's counters from the Prometheus text. */
export function sinkCounters(text: string, sink: string): Record<'delivered' | 'spilled' | 'replayed' | 'dropped' | 'up', number> {
  const value = (pattern: string) => Number(new RegExp(`^${pattern} (\\d+)`, 'm').exec(text)?.[1] ?? 'NaN');
  return {
    delivered: value(`gateway_log_sink_entries_total\\{sink="${sink}",result="delivered"\\}`),
    spilled: value(`gateway_log_sink_entries_total\\{sink="${sink}",result="spilled"\\}`),
    replayed: value(`gateway_log_sink_entries_total\\{sink="${sink}",result="replayed"\\}`),
    dropped: value(`gateway_log_sink_entries_dropped_total\\{sink="${sink}",reason="spill_full"\\}`),
    up: value(`gateway_log_sink_up\\{sink="${sink}"\\}`),
  };
}

/** Polls `check` every 100 ms until it is true or `timeoutMs` passed. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

/** The first occurrence of each id, in order, and how many were repeats. */
export function firstOccurrences(ids: readonly string[]): { order: string[]; repeats: number } {
  const seen = new Set<string>();
  const order: string[] = [];
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    order.push(id);
  }
  return { order, repeats: ids.length - order.length };
}


/** Whether a broker listens at `broker`. Without one the test is skipped (`skipped` is logged), but under CI=true it is an error. */
export async function brokerReachable(broker: { host: string; port: number }, skipped: string): Promise<boolean> {
  const reachable = await new Promise<boolean>((resolve) => {
    const socket = connect(broker.port, broker.host, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
  if (!reachable && process.env.CI === 'true') throw new Error('the log sink test needs its broker on loopback and CI=true: start it (.ci/run does)');
  if (!reachable) console.log(skipped);
  return reachable;
}

export interface OutageRun {
  readonly broker: { host: string; port: number };
  /** The sink's name in the metrics. */
  readonly name: string;
  /** The sink under test, reaching the broker through the proxy on `port`. */
  sink(port: number): LogSinkRegistration;
  readonly total: number;
  readonly concurrency: number;
  /** Reads what reached the broker and checks it; returns what to log beside the sink's counters. */
  check(gateway: SinkGateway): Promise<Record<string, unknown> | void>;
}

/**
 * A broker sink's end-to-end run: `total` requests through a gateway whose sink reaches the broker
 * through a TCP proxy closed for the middle half of the run; `check` reads what arrived; then the
 * sink's counters must show that the outage spilled entries, that all were replayed, none dropped,
 * and the sink up. The shared broker is never stopped: the proxy is what goes down.
 */
export async function throughOutage(t: ExecutionContext, run: OutageRun): Promise<void> {
  const proxy = new TcpProxy(run.broker);
  await proxy.up();
  const provider = await fastProvider();
  const gateway = await sinkGateway(run.sink(proxy.port));
  try {
    const { seconds } = await drive(gateway.url, provider.url, run.total, run.concurrency, {
      [run.total / 4]: () => proxy.down(),
      [(run.total * 3) / 4]: () => proxy.up(),
    });
    t.log(`${run.total} requests in ${seconds.toFixed(1)} s (${Math.round(run.total / seconds)} req/s)`);
    const logged = await run.check(gateway);
    const counters = sinkCounters(await gateway.gateway.metrics.render(), run.name);
    t.log({ ...counters, ...logged });
    t.true(counters.spilled > 0, 'the outage sent entries to the spill directory');
    t.true(counters.replayed >= counters.spilled, 'everything spilled was replayed');
    t.is(counters.dropped, 0);
    t.is(counters.up, 1);
  } finally {
    await gateway.close();
    await proxy.down();
    provider.close();
  }
}
