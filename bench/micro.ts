// `npm run build && npx node dist/bench/micro.js` (also run by `npm run bench`): what some of
// issue 9's and issue 21's changes bought, each measured against the way it was done before, in one run, in this
// process: CPU µs per operation (median of 5 rounds), and the wall time of reading a body on an
// idle server. Prints figures only.
import { once } from 'node:events';
import { Agent, createServer, type IncomingMessage, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, pipeline, type Readable, Transform, Writable } from 'node:stream';
import { pipeInto } from '../core/http/pipe.js';
import { readChunks, WholeBody } from '../core/http/body.js';
import { countUnits } from '../plugins/guardrails/length-bounds/index.js';
import { Counter, Histogram, Registry } from 'prom-client';
import { GatewayMetrics } from '../core/metrics/metrics.js';
import type { LogBodies, LogEntry } from '../core/logs/entry.js';
import { REDACTION_PATTERNS, redactSecrets } from '../core/redact.js';
import { textBodies, toLogRecord } from '../core/logs/record.js';
import { pino } from 'pino';
import { loggerWithHeldLines, PinoLogSink } from '../core/logs/pino-sink.js';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { timeOrderedId } from '../core/ids.js';
import { UpstreamClient } from '../core/http/upstream.js';
import { BudgetAlerts } from '../core/vault/alerts.js';
import { SqliteState } from '../core/store/sqlite-state.js';

const ROUNDS = 5;

async function measure(iterations: number, run: () => unknown): Promise<number> {
  for (let index = 0; index < Math.min(iterations, 2000); index++) await run();
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = process.cpuUsage();
    for (let index = 0; index < iterations; index++) await run();
    const used = process.cpuUsage(before);
    rounds.push((used.user + used.system) / iterations);
  }
  return rounds.sort((left, right) => left - right)[Math.floor(ROUNDS / 2)];
}

const BODY = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Please summarise the notes from the weekly planning meeting.' }] }));
const ANSWER = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I assist you today?', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 },
  }),
);
const PROMPT = 'Please summarise the notes from the weekly planning meeting and send them to ana.lopez@example.com, keeping the action items and owners in a short list at the end.';

/**
 * Wall time (ms, mean) from a server's request handler being called to the small JSON body read,
 * over `count` keep-alive requests 30 ms apart: on an idle gateway (a request now and then) the
 * way the body is read shows, in a hot loop it does not.
 */
async function idleBodyRead(read: (request: IncomingMessage) => Promise<unknown>, count = 40): Promise<number> {
  let total = 0;
  let measured = 0;
  const server = createServer((request, response) => {
    const started = performance.now();
    void read(request).then(() => {
      total += performance.now() - started;
      measured++;
      response.end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  for (let index = 0; index < count + 5; index++) {
    if (index === 5) [total, measured] = [0, 0];
    await new Promise<void>((resolve, reject) => {
      const outgoing = httpRequest(url, { agent, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': BODY.length } }, (answer) => {
        answer.resume();
        answer.once('end', resolve);
      });
      outgoing.once('error', reject);
      outgoing.end(BODY);
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  agent.destroy();
  server.close();
  return total / measured;
}

const sink = () => new Writable({ write: (_chunk, _encoding, callback) => callback() });
const tap = () => new Transform({ transform: (chunk, _encoding, callback) => callback(null, chunk) });
function streamThrough(connect: (source: PassThrough, through: Transform) => Readable): Promise<void> {
  const source = new PassThrough();
  const out = connect(source, tap());
  out.pipe(sink());
  source.end('data: {}\n\n');
  return new Promise((resolve) => out.once('end', resolve));
}

/** A finished virtual-key chat request's log entry and bodies, as the bench's requests make them. */
const ENTRY: LogEntry = {
  id: '019ab3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b',
  time: '2026-11-23T22:00:00.000Z',
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  method: 'POST',
  path: '/v1/chat/completions',
  operation: 'chat',
  provider: 'openai',
  model: 'gpt-4o-mini',
  status: 200,
  outcome: 'ok',
  caller: 'virtual-key:vk_0123',
  callerType: 'virtual-key',
  keyId: 'vk_0123',
  keyName: 'bench',
  streaming: false,
  durationMs: 1.234,
  gatewayMs: 0.456,
  upstreamMs: 0.778,
  usage: { promptTokens: 19, completionTokens: 10, totalTokens: 29 },
  costUsd: 0.0000088,
  metadata: {},
  guardrails: [],
};
const BODIES: LogBodies = {
  request: Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] })),
  response: { json: JSON.parse(ANSWER.toString('utf8')), serialised: ANSWER },
  secrets: ['sk-bench-provider-key-0123456789', 'vk-0123456789abcdef0123456789abcdef'],
};

/** The body reader before issue 21: a promise and its closures and listeners per read (kept here to measure against). */
function closureRead(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    const detach = (): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => void chunks.push(chunk);
    const onEnd = (): void => {
      detach();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    };
    const onError = (error: Error): void => {
      detach();
      reject(error);
    };
    const onClose = (): void => onError(new Error('Premature close'));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    stream.once('close', onClose);
  });
}

/** A small body already in its stream's buffer, as a request body is when the handler reads it. */
function bufferedBody(): PassThrough {
  const stream = new PassThrough();
  stream.end(BODY);
  return stream;
}

/** Until the stream has ended and closed (each read's whole cost, and no streams piling up in the loop). */
const closed = (stream: Readable): Promise<unknown> | undefined => (stream.closed ? undefined : once(stream, 'close'));

/** prom-client's own counter and histograms fed per request, as the metrics sink did before issue 21. */
function promClientSink(): (entry: LogEntry) => void {
  const registers = [new Registry()];
  const requests = new Counter({ name: 'r', help: 'r', labelNames: ['provider', 'model', 'operation', 'status'], registers });
  const histogram = (name: string) => new Histogram({ name, help: name, labelNames: ['provider', 'operation'], buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300], registers });
  const [overhead, upstream] = [histogram('o'), histogram('u')];
  const tokens = new Counter({ name: 't', help: 't', labelNames: ['provider', 'model', 'type'], registers });
  const cost = new Counter({ name: 'c', help: 'c', labelNames: ['provider', 'model'], registers });
  return (entry) => {
    const [provider, model, operation] = [entry.provider ?? '', entry.model ?? '', entry.operation];
    requests.inc({ provider, model, operation, status: String(entry.status) });
    overhead.observe({ provider, operation }, entry.gatewayMs / 1000);
    upstream.observe({ provider, operation }, entry.upstreamMs! / 1000);
    tokens.inc({ provider, model, type: 'prompt' }, entry.usage!.promptTokens);
    tokens.inc({ provider, model, type: 'completion' }, entry.usage!.completionTokens);
    cost.inc({ provider, model }, entry.costUsd!);
  };
}

/** The UUIDv7 as built before issue 21's second round: from `randomUUID()` and string slices. */
function uuidFromSlices(now = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}

/**
 * One upstream call to a local server and its small answer read whole: undici's `request()` with
 * an abort controller following the client's signal and a deadline timer (as before issue 21's
 * second round), against the gateway's dispatch handler (`UpstreamClient.send`).
 */
async function upstreamCalls(): Promise<[number, number]> {
  const server = createServer((_request, response) => response.end(ANSWER));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const headers = { 'content-type': 'application/json' };
  const client = new AbortController().signal;
  const pool = new Pool(origin, { connections: 1, keepAliveTimeout: 30_000 });
  const before = await measure(5_000, async () => {
    const controller = new AbortController();
    const onAbort = () => controller.abort(client.reason);
    client.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(new Error('deadline')), 60_000);
    const answer = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body: BODY, signal: controller.signal, headersTimeout: 60_000, bodyTimeout: 60_000 });
    answer.body.once('close', () => {
      clearTimeout(timer);
      client.removeEventListener('abort', onAbort);
    });
    await new WholeBody(answer.body, 1 << 20, () => new Error('too large'), 'answer', undefined, 1).run(Number(answer.headers['content-length']));
    await closed(answer.body);
  });
  const upstream = new UpstreamClient({ timeoutMs: 60_000, streamIdleTimeoutMs: 60_000, connectTimeoutMs: 10_000, connectionsPerOrigin: 1, maxPools: 10, poolIdleTimeoutMs: 60_000 });
  const request = { method: 'POST' as const, url: `${origin}/v1/chat/completions`, headers, body: BODY };
  const after = await measure(5_000, async () => {
    const answer = await upstream.send(request, { signal: client, guarded: false });
    await new WholeBody(answer.body, 1 << 20, () => new Error('too large'), 'answer', undefined, 1).run(Number(answer.headers['content-length']));
    await closed(answer.body);
  });
  await Promise.all([pool.close(), upstream.close()]);
  server.close();
  return [before, after];
}

async function main(): Promise<void> {
  const rows: Array<[string, number, number]> = [];
  rows.push(['a UUIDv7 (log entry and trace ids, 2 per request): randomUUID + slices → one buffer (issue 21)', await measure(200_000, () => uuidFromSlices()), await measure(200_000, () => timeOrderedId())]);
  const [undiciRequest, dispatched] = await upstreamCalls();
  rows.push(['upstream call + 200-byte answer, local server: request() + AbortController → dispatch handler (issue 21)', undiciRequest, dispatched]);
  const state = new SqliteState(mkdtempSync(join(tmpdir(), 'micro-alerts-')));
  const alerts = new BudgetAlerts({ state: () => state, logger: { warn: () => {} } });
  const budget = { level: 'key' as const, keyId: 'vk_micro', keyName: 'micro', budgetNanos: 1e18, period: 'total' as const, spentKey: 'usage:vk_micro:spent:total', now: Date.now() };
  rows.push([
    'budget alert check after a charge, below 80 %: read the spend → spend from the settle (issue 21)',
    await measure(50_000, () => {
      alerts.charged(budget);
      return alerts.idle();
    }),
    await measure(50_000, () => {
      alerts.charged(budget, 1000);
      return alerts.idle();
    }),
  ]);
  await state.close();
  const promClient = promClientSink();
  const metrics = new GatewayMetrics();
  rows.push([
    'request metrics of one entry: prom-client inc/observe with labels → kept series (issue 21)',
    await measure(100_000, () => promClient(ENTRY)),
    await measure(100_000, () => metrics.sink.write(ENTRY)),
  ]);
  rows.push([
    'log writer, request thread, per entry: record (redacted) + JSON → bodies as text + JSON (issue 21)',
    await measure(50_000, () => JSON.stringify(toLogRecord(ENTRY, BODIES))),
    await measure(50_000, () => JSON.stringify({ entry: ENTRY, bodies: textBodies(BODIES) })),
  ]);
  // Four request lines per turn of the event loop, to /dev/null through pino's asynchronous destination.
  const turnOfLines = (sink: PinoLogSink) => async () => {
    for (let line = 0; line < 4; line++) sink.write(ENTRY);
    await new Promise((resolve) => setImmediate(resolve));
  };
  const pinoOptions = { level: 'info', base: undefined };
  const held = loggerWithHeldLines(pinoOptions, pino.destination({ dest: '/dev/null', sync: false }));
  rows.push([
    'pino request lines, 4 per turn: logger.info each → built by hand, written once per turn (issue 21)',
    await measure(10_000, turnOfLines(new PinoLogSink(pino(pinoOptions, pino.destination({ dest: '/dev/null', sync: false }))))),
    await measure(10_000, turnOfLines(new PinoLogSink(held.logger, held.lines))),
  ]);
  rows.push([
    'read a buffered 200-byte body: promise + closures + listeners → reader object, taken from the buffer (issue 21)',
    await measure(50_000, async () => {
      const stream = bufferedBody();
      const bytes = await closureRead(stream);
      await closed(stream);
      return bytes;
    }),
    await measure(50_000, async () => {
      const stream = bufferedBody();
      const body = new WholeBody(stream, 1 << 20, () => new Error('too large'), 'body', undefined, 1);
      await body.run(BODY.length);
      await closed(stream);
      return body.bytes();
    }),
  ]);
  const forAwait = await idleBodyRead(async (request) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
  });
  const events = await idleBodyRead((request) => readChunks(request, () => {}));
  rows.push([
    'join a stream tap: stream.pipeline → pipeInto (core/http/pipe.ts)',
    await measure(20_000, () => streamThrough((source, through) => pipeline(source, through, () => {}))),
    await measure(20_000, () => streamThrough((source, through) => pipeInto(source, through))),
  ]);
  rows.push([
    'send an unchanged answer: JSON.stringify for client and log → its bytes',
    await measure(50_000, () => {
      const parsed = JSON.parse(ANSWER.toString('utf8'));
      Buffer.from(JSON.stringify(parsed));
      JSON.stringify(parsed);
    }),
    await measure(50_000, () => {
      JSON.parse(ANSWER.toString('utf8'));
      ANSWER.toString('utf8');
    }),
  ]);
  rows.push([
    'length-bounds (words, max 100000) on a 160-character prompt: segment → length shortcut',
    await measure(20_000, () => countUnits(PROMPT, 'words') > 100_000),
    await measure(20_000, () => PROMPT.length <= 100_000 || countUnits(PROMPT, 'words') > 100_000),
  ]);
  const secrets = ['sk-bench-0123456789abcdef', undefined, 'vk-bench-0123456789abcdef'];
  const withoutPrecheck = (text: string): string => {
    let redacted = text;
    for (const secret of secrets) if (secret) redacted = redacted.split(secret).join('[REDACTED]');
    const { KEY_LIKE, SECRET_PAIR, SECRET_MEMBER } = REDACTION_PATTERNS;
    return redacted.replace(KEY_LIKE, '[REDACTED]').replace(SECRET_PAIR, '$1=[REDACTED]').replace(SECRET_MEMBER, '$1[REDACTED]');
  };
  const request = BODY.toString('utf8');
  const answer = ANSWER.toString('utf8');
  rows.push([
    'redact a chat request and its answer for the log: every pattern → secret-name patterns only where a name ends in = or a quote',
    await measure(50_000, () => withoutPrecheck(request) + withoutPrecheck(answer)),
    await measure(50_000, () => redactSecrets(request, secrets) + redactSecrets(answer, secrets)),
  ]);
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = [`${'change'.padEnd(width)}  before µs  after µs`];
  for (const [label, before, after] of rows) lines.push(`${label.padEnd(width)}  ${before.toFixed(2).padStart(9)}  ${after.toFixed(2).padStart(8)}`);
  process.stdout.write(`\nWhat some changes bought (CPU µs per operation, median of ${ROUNDS} rounds, one run):\n${lines.join('\n')}\n`);
  process.stdout.write(
    `Reading a small request body on an idle server (ms from the handler to the body, mean of 40 requests 30 ms apart): ` +
      `for await ${forAwait.toFixed(3)} ms, data events (readChunks) ${events.toFixed(3)} ms\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`micro: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
