import { once } from 'node:events';
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext, TestFn } from 'ava';
import fc from 'fast-check';
import { openai } from '../../plugins/providers/openai/index.js';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { installLoopbackGuard, type LoopbackGuard } from './loopback-only.js';

/** The fixed seed of the suite (`GATEWAY_FUZZ_SEED` picks another); batch `i` uses `seed + i`. */
export const FUZZ_SEED = Number(process.env.GATEWAY_FUZZ_SEED ?? 20_261_123);

/**
 * `GATEWAY_FUZZ_RUNS=<n>` multiplies the number of batches of every property (default 1): each
 * batch keeps its size and duration, so a large run stays within ava's time-out per test.
 */
export const FUZZ_SCALE = Math.max(1, Math.floor(Number(process.env.GATEWAY_FUZZ_RUNS ?? 1)) || 1);

/** Bodies over this are refused with 413; small, so that the fuzzer reaches the limit cheaply. */
export const FUZZ_BODY_LIMIT = 256 * 1024;

/** One generated request. `chunked` sends the body with chunked transfer encoding, in three pieces. */
export interface FuzzRequest {
  readonly method: string;
  /** Request target as sent on the wire (latin1: a UTF-8 path is given as its bytes). */
  readonly path: string;
  readonly headers: Record<string, string | string[]>;
  readonly body?: Buffer;
  readonly chunked?: boolean;
}

export interface FuzzAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** A gateway in front of a loopback fake that refuses every request with an OpenAI-shaped 400. */
export interface FuzzTarget {
  readonly gateway: TestGateway;
  /** The fake provider's `/v1` base URL (loopback). */
  readonly fakeBaseUrl: string;
  readonly guard: LoopbackGuard;
  send(request: FuzzRequest): Promise<FuzzAnswer>;
  close(): Promise<void>;
}

/** The fake provider's one answer: what OpenAI says to a request it cannot use. */
const REFUSAL = Buffer.from(
  JSON.stringify({ error: { message: 'Refused by the fuzz suite’s fake provider.', type: 'invalid_request_error', param: null, code: null } }),
);

/** A loopback provider that reads each request whole and answers it with {@link REFUSAL}. */
async function startRefusingFake(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.once('end', () => response.writeHead(400, { 'content-type': 'application/json', 'content-length': String(REFUSAL.length) }).end(REFUSAL));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Starts the fake and a gateway whose only provider (openai) points at it. */
export async function startFuzzTarget(): Promise<FuzzTarget> {
  const guard = installLoopbackGuard();
  const fake = await startRefusingFake();
  const gateway = await startGateway({ providers: [openai({ baseUrl: fake.baseUrl })], bodyLimitBytes: FUZZ_BODY_LIMIT }, { LOG_LEVEL: 'warn' });
  const url = new URL(gateway.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  return {
    gateway,
    fakeBaseUrl: fake.baseUrl,
    guard,
    send: (request) => send(agent, url, request),
    async close() {
      agent.destroy();
      await gateway.close();
      await fake.close();
    },
  };
}

/** Sends one request with Node's client (no retries) and reads the whole answer; rejects on a reset. */
function send(agent: Agent, url: URL, request: FuzzRequest): Promise<FuzzAnswer> {
  return new Promise((resolve, reject) => {
    const body = request.body;
    const chunked = request.chunked === true && body !== undefined && body.length > 1;
    // Framing is always explicit: Node's client sends a GET body with neither header otherwise.
    const framing = body === undefined ? {} : chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) };
    const outgoing = httpRequest(
      { agent, host: url.hostname, port: url.port, method: request.method, path: request.path, headers: { ...request.headers, ...framing } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    outgoing.on('error', reject);
    outgoing.setTimeout(15_000, () => outgoing.destroy(new Error('no answer within 15 s')));
    if (body === undefined) {
      outgoing.end();
    } else if (chunked) {
      const cut = Math.ceil(body.length / 3);
      outgoing.write(body.subarray(0, cut));
      outgoing.write(body.subarray(cut, 2 * cut));
      outgoing.end(body.subarray(2 * cut));
    } else {
      outgoing.end(body);
    }
  });
}

/** What is wrong with an answer that should be a client error in the OpenAI shape, or undefined. */
export function notAClientError(answer: FuzzAnswer): string | undefined {
  if (answer.status < 400 || answer.status > 499) return `status ${answer.status}, expected 4xx`;
  let json: any;
  try {
    json = JSON.parse(answer.text);
  } catch {
    return 'the body is not JSON';
  }
  const error = json?.error;
  if (typeof error !== 'object' || error === null) return 'no "error" object';
  if (typeof error.message !== 'string' || typeof error.type !== 'string') return 'error.message and error.type must be strings';
  if (!('param' in error) || !('code' in error)) return 'error.param and error.code must be present';
  return undefined;
}

/** A generated request, short enough to read in a failure report. */
export function describe(request: FuzzRequest): string {
  const body = request.body === undefined ? '' : `\n${request.body.length > 600 ? `${request.body.subarray(0, 600).toString('latin1')}… (${request.body.length} bytes)` : request.body.toString('latin1')}`;
  const path = request.path.length > 300 ? `${request.path.slice(0, 300)}… (${request.path.length} characters)` : request.path;
  // The harness's keys are shown by name, so that a failure report carries no secret.
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `${name}: ${JSON.stringify(value).slice(0, 300).replaceAll(ACCOUNT_KEY, '<ACCOUNT_KEY>').replaceAll(PROVIDER_KEY, '<PROVIDER_KEY>')}`)
    .join('\n');
  return `${request.method} ${JSON.stringify(path)}${request.chunked ? ' (chunked)' : ''}\n${headers}${body}`;
}

export interface PropertyOptions {
  /** Generated requests per batch. */
  readonly runs: number;
  /** Batches (ava tests) at scale 1; each checks `/health` after its requests. */
  readonly batches?: number;
  /** Requests sent at once (default 1: one after the other). */
  readonly concurrency?: number;
  /** What is wrong with an answer (default {@link notAClientError}). */
  readonly check?: (answer: FuzzAnswer, request: FuzzRequest) => string | undefined;
}

type Check = NonNullable<PropertyOptions['check']>;

/** Sends one request; throws a readable report when it gets no answer or a wrong one. */
async function sendAndCheck(target: FuzzTarget, request: FuzzRequest, check: Check): Promise<void> {
  let answer: FuzzAnswer;
  try {
    answer = await target.send(request);
  } catch (error) {
    throw new Error(`no answer (${(error as Error).message})\n${describe(request)}`);
  }
  const problem = check(answer, request);
  if (problem) throw new Error(`${problem}\n${describe(request)}\n→ ${answer.status} ${answer.text.slice(0, 500)}`);
}

/** Runs one batch: `runs` generated requests (in groups of `concurrency`), then the health and loopback checks. */
async function runBatch(t: ExecutionContext, target: FuzzTarget, arbitrary: fc.Arbitrary<FuzzRequest>, seed: number, options: PropertyOptions): Promise<void> {
  const check = options.check ?? notAClientError;
  const concurrency = options.concurrency ?? 1;
  const printable = arbitrary.map((request) => Object.assign(request, { [fc.toStringMethod]: () => describe(request) }));
  const groups = fc.array(printable, { minLength: concurrency, maxLength: concurrency });
  const property = fc.asyncProperty(groups, async (requests) => {
    await Promise.all(requests.map((request) => sendAndCheck(target, request, check)));
  });
  const details = await fc.check(property, {
    seed,
    numRuns: Math.ceil(options.runs / concurrency),
    // Shrinking sends more requests; it stops here so a failure is reported within ava's time-out.
    interruptAfterTimeLimit: 45_000,
  });
  if (details.failed) {
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    t.fail(`${cause}\n\n${fc.defaultReportMessage(details) ?? ''}`);
  }
  if (details.interrupted) t.log(`interrupted after ${details.numRuns * concurrency} of ${options.runs} requests`);
  const health = await target.send({ method: 'GET', path: '/health', headers: {} });
  t.is(health.status, 200, 'GET /health after the batch');
  t.deepEqual(target.guard.refusedConnects, [], 'nothing tried to connect outside loopback');
  t.deepEqual(
    target.guard.refusedLookups.filter((name) => !/\.(?:invalid|test)$/i.test(name)),
    [],
    'no name was looked up but the generated reserved ones',
  );
}

/**
 * One fuzz test file: a target started (then `prepare`d) before its tests and closed after them,
 * and properties registered as serial ava tests, one per batch, each with its own fixed seed.
 */
export function fuzzSuite(test: TestFn, prepare?: (target: FuzzTarget) => Promise<void>) {
  let target: FuzzTarget | undefined;
  test.before(async () => {
    target = await startFuzzTarget();
    await prepare?.(target);
  });
  test.after.always(async () => {
    await target?.close();
  });

  return {
    /** Registers `batches × GATEWAY_FUZZ_RUNS` tests that send what `arbitrary` generates. */
    property(title: string, arbitrary: (target: FuzzTarget) => fc.Arbitrary<FuzzRequest>, options: PropertyOptions): void {
      const batches = (options.batches ?? 1) * FUZZ_SCALE;
      const together = options.concurrency && options.concurrency > 1 ? `, ${options.concurrency} at once` : '';
      for (let batch = 0; batch < batches; batch++) {
        const seed = FUZZ_SEED + batch;
        test.serial(`${title} (${options.runs} requests${together}, seed ${seed})`, (t) => runBatch(t, target!, arbitrary(target!), seed, options));
      }
    },
  };
}
