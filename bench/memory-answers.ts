// Memory check (not a test, not timed): `npm run bench:memory-answers`. A gateway child with a
// configured memory budget relays six concurrent chat requests whose loopback upstream answers
// each with a 250 MB JSON body; the gateway's RSS is sampled from outside, and the peak is
// compared with the budget plus 100 MB (the issue: six such answers took RSS to 5.3 GB).
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { killAllServers, startServer, stopAllServers } from './children.js';
import { CHILD_ENVIRONMENT } from './protocol.js';
import { RssSampler } from './rss.js';

const MiB = 1024 * 1024;
const ANSWER_BYTES = 250 * 1000 * 1000;
const CONCURRENT = 6;
const BUDGET_MB = 512;
const MARGIN_BYTES = 100 * MiB;
const API_KEY = 'gw-bench-memory-answers-0123456789';
const SAMPLE_MS = 25;

const HEAD = '{"id":"chatcmpl-big","object":"chat.completion","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"';
const TAIL = '"},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}';
const BLOCK = Buffer.alloc(MiB, 'x');

/** Resolves when `response` can take more, or has closed (listeners removed either way). */
function drainOrClose(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.once('drain', done);
    response.once('close', done);
  });
}

/** Writes one chat completion of about `size` bytes (chunked, no Content-Length), following backpressure; stops when the gateway hangs up. */
async function answerHuge(response: ServerResponse, size: number): Promise<void> {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write(HEAD);
  let closed = false;
  response.once('close', () => (closed = true));
  for (let written = 0; written < size && !closed; written += BLOCK.length) {
    if (!response.write(BLOCK)) await drainOrClose(response);
  }
  if (!closed) response.end(TAIL);
}

/** The fake's origin; a custom host `<origin>/size-<bytes>/v1` gets answers of that size. */
async function startHugeUpstream(): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer((request, response) => {
    request.resume();
    // The size is named by the custom host's path: `/size-<bytes>/v1/chat/completions`.
    const size = Number(/^\/size-(\d+)\//.exec(request.url ?? '')?.[1] ?? ANSWER_BYTES);
    request.once('end', () => void answerHuge(response, size));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Sends one chat request through the gateway; returns its status and error code, the body read and dropped. */
async function chat(gatewayUrl: string, upstreamBaseUrl: string): Promise<string> {
  const response = await fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': API_KEY,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': upstreamBaseUrl,
      authorization: 'Bearer sk-bench',
    },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }] }),
  });
  if (response.status === 200) {
    let bytes = 0;
    for await (const chunk of response.body!) bytes += (chunk as Uint8Array).byteLength;
    return `200 (${Math.round(bytes / MiB)} MiB)`;
  }
  const body = (await response.json()) as { error?: { code?: string } };
  return `${response.status} ${body.error?.code ?? ''}`;
}

/** One scenario: a fresh gateway child, six concurrent huge answers, the peak RSS. */
async function scenario(name: string, upstreamBaseUrl: string, environment: Record<string, string>, answerBytes = ANSWER_BYTES): Promise<boolean> {
  const gateway = await startServer('gateway', {
    [CHILD_ENVIRONMENT.gatewayApiKey]: API_KEY,
    [CHILD_ENVIRONMENT.gatewayMemoryBudgetMb]: String(BUDGET_MB),
    ...environment,
  });
  const idle = await gateway.rss();
  const sampler = new RssSampler(() => gateway.rss(), SAMPLE_MS).start();
  const outcomes = await Promise.all(Array.from({ length: CONCURRENT }, () => chat(gateway.url, `${upstreamBaseUrl}/size-${answerBytes}/v1`)));
  const window = await sampler.stop();
  await gateway.stop();
  const budget = BUDGET_MB * MiB;
  const pass = window.maxBytes < budget + MARGIN_BYTES;
  console.log(`\n${name}`);
  console.log(`  answers: ${outcomes.join(', ')}`);
  console.log(`  RSS idle ${Math.round(idle / MiB)} MiB, peak ${Math.round(window.maxBytes / MiB)} MiB (${window.samples} samples every ${SAMPLE_MS} ms)`);
  console.log(`  budget ${BUDGET_MB} MiB; peak RSS < budget + 100 MB: ${pass ? 'PASS' : 'MISS'}`);
  return pass;
}

process.on('exit', killAllServers);
const upstream = await startHugeUpstream();
try {
  console.log(`${CONCURRENT} concurrent chat requests, each answered with a ${ANSWER_BYTES / 1e6} MB JSON body (chunked, no Content-Length).`);
  const results = [
    await scenario('Default per-answer cap (upstream.maxAnswerBytes 64 MiB):', upstream.baseUrl, {}),
    await scenario('Per-answer cap raised to 300 MiB (the memory budget is the only bound):', upstream.baseUrl, {
      [CHILD_ENVIRONMENT.gatewayMaxAnswerBytes]: String(300 * MiB),
    }),
    await scenario('For comparison, six 60 MB answers (under the cap: those the budget admits are served whole):', upstream.baseUrl, {}, 60 * 1000 * 1000),
  ];
  console.log(`\n${results.every(Boolean) ? 'PASS' : 'MISS'}`);
} finally {
  await stopAllServers();
  upstream.server.closeAllConnections();
  upstream.server.close();
}
