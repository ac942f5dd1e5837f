import { Agent } from 'node:http';
import type { ServerChild } from './children.js';
import { type StreamTiming, timeStream } from './client.js';
import { RssSampler } from './rss.js';
import { maxOverlap, percentile } from './stats.js';
import { streamProblem } from './stream-test.js';

/** What holding many streams open at once through the gateway showed. */
export interface OpenStreamsFigures {
  requested: number;
  /** Streams that ended as a 200 with every chunk and `[DONE]`, no error event. */
  completeOk: number;
  /** Up to five reasons why others did not (status, missing chunks, a client error). */
  problems: string[];
  /** Most streams open at once: between headers and end at the client; as the mock counted them. */
  maxOpenAtClient: number;
  peakOpenAtMock: number;
  /** Gateway RSS before the streams were opened, and the largest sampled while they ran. */
  rssBeforeBytes: number;
  peakRssBytes: number;
  firstByteP50Ms: number;
  firstByteMaxMs: number;
  durationMs: number;
}

/**
 * Opens `count` streaming chat requests to the gateway at once (one connection each) and reads
 * them all to the end, sampling the gateway's RSS meanwhile. `mock` is the upstream the key points
 * at; its stream must last long enough for all of them to be open together.
 */
export async function holdOpenStreams(options: {
  gateway: ServerChild;
  mock: ServerChild;
  url: string;
  headers: Record<string, string>;
  body: string;
  count: number;
  expectedChunks: number;
  limitMs: number;
  rssSampleMs: number;
}): Promise<OpenStreamsFigures> {
  const rssBeforeBytes = await options.gateway.rss();
  const sampler = new RssSampler(() => options.gateway.rss(), options.rssSampleMs).start();
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const target = { url: options.url, headers: options.headers, body: options.body, agent };
  const startedAt = performance.now();
  const settled = await Promise.allSettled(Array.from({ length: options.count }, () => timeStream(target, options.limitMs)));
  const durationMs = performance.now() - startedAt;
  const rss = await sampler.stop();
  agent.destroy();
  const mockUsage = await options.mock.usage();

  const timings: StreamTiming[] = [];
  const problems: string[] = [];
  for (const outcome of settled) {
    if (outcome.status === 'rejected') {
      problems.push(`client error: ${(outcome.reason as Error)?.message ?? String(outcome.reason)}`);
      continue;
    }
    const problem = streamProblem(outcome.value, options.expectedChunks);
    if (problem === undefined) timings.push(outcome.value);
    else problems.push(problem);
  }
  const firstBytes = timings.map((timing) => timing.firstByteMs);
  return {
    requested: options.count,
    completeOk: timings.length,
    problems: [...new Set(problems)].slice(0, 5),
    maxOpenAtClient: maxOverlap(timings.map((timing) => [timing.sentAt + timing.headersMs, timing.sentAt + timing.endMs] as const)),
    peakOpenAtMock: mockUsage.peakOpenStreams ?? Number.NaN,
    rssBeforeBytes,
    peakRssBytes: rss.maxBytes,
    firstByteP50Ms: percentile(firstBytes, 0.5),
    firstByteMaxMs: percentile(firstBytes, 1),
    durationMs,
  };
}
