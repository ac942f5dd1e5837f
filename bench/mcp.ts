// `npm run bench:mcp`: what the MCP gateway adds (issue 35's budgets: a `tools/call` through the
// gateway at most 1 ms more at p50 than calling the upstream server directly; 10,000 open sessions
// fit in the memory budget).
// - Latency: one upstream MCP server (streamable HTTP, JSON answers, an echo tool) and one gateway
//   (default config, its log written and stored) run in this process. The same JSON-RPC
//   `tools/call` is sent, one at a time over one keep-alive connection, to the upstream directly and
//   to the gateway's `/mcp` (a session opened first, a key granted the tool), in alternating rounds;
//   the p50 and p99 of each side and the difference of the p50s are printed.
// - Memory: 10,000 sessions are opened (`initialize` with the key) and the heap and RSS measured
//   before and after, with a full collection each time (`--expose-gc`); a session is a record in the
//   shared state, so the figure is what the instance holds for them (caches, log queue).
import { mkdtempSync } from 'node:fs';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createGateway } from '../core/app.js';
import { openai } from '../plugins/providers/openai/index.js';

const ROUNDS = 10;
const CALLS = 500;
const SESSIONS = 10_000;
const GOAL_MS = 1;
const ACCOUNT_KEY = 'gw-bench-mcp-0123456789abcdef';

/** A minimal upstream MCP server: initialize, tools/list, an echo tool; no server-initiated stream. */
function upstreamServer() {
  return createServer((request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(request.method === 'DELETE' ? 200 : 405).end();
      return;
    }
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const message = JSON.parse(Buffer.concat(parts).toString('utf8')) as { id?: number; method: string; params?: { protocolVersion?: string; arguments?: unknown } };
      const json = (result: unknown, headers: Record<string, string> = {}) => response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      if (message.id === undefined) response.writeHead(202).end();
      else if (message.method === 'initialize') json({ protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bench', version: '1' } }, { 'mcp-session-id': 'bench-session' });
      else if (message.method === 'tools/list') json({ tools: [{ name: 'echo', description: 'echoes its arguments', inputSchema: { type: 'object' } }] });
      else json({ content: [{ type: 'text', text: JSON.stringify(message.params?.arguments ?? {}) }] });
    });
  });
}

const percentile = (values: readonly number[], share: number) => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))];
};

async function main(): Promise<void> {
  const upstream = upstreamServer();
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
  const gateway = createGateway(
    { providers: [openai()] },
    { environment: { GATEWAY_API_KEY: ACCOUNT_KEY, GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'bench-mcp-')), LOG_LEVEL: 'info' }, logDestination: { write() {} } },
  );
  const { url } = await gateway.listen(0, '127.0.0.1');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  const post = (target: string, body: unknown, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
      const text = JSON.stringify(body);
      const request = httpRequest(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': String(Buffer.byteLength(text)), ...headers } }, (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.once('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(parts).toString('utf8') }));
      });
      request.once('error', reject);
      request.end(text);
    });
  const admin = async (path: string, body: unknown) => {
    const answer = await post(`${url}${path}`, body, { 'x-gateway-api-key': ACCOUNT_KEY });
    if (answer.status !== 201) throw new Error(`${path} answered ${answer.status}: ${answer.text}`);
    return JSON.parse(answer.text) as Record<string, string>;
  };

  await admin('/admin/mcp-servers', { name: 'bench', transport: 'streamable-http', url: upstreamUrl });
  const { key } = await admin('/admin/virtual-keys', { name: 'bench-agent', mcp: { servers: { bench: { tools: ['echo'] } } } });
  const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } };
  const opened = await post(`${url}/mcp`, initialize, { authorization: `Bearer ${key}` });
  const session = String(opened.headers['mcp-session-id']);
  const gatewayHeaders = { authorization: `Bearer ${key}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  const call = (name: string) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { note: 'a short note to echo back', n: 42 } } });

  const timed = async (target: string, body: unknown, headers: Record<string, string>): Promise<number[]> => {
    const times: number[] = [];
    for (let index = 0; index < CALLS; index++) {
      const started = performance.now();
      const answer = await post(target, body, headers);
      times.push(performance.now() - started);
      if (answer.status !== 200 || !answer.text.includes('a short note')) throw new Error(`tools/call answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    }
    return times;
  };
  // The official SDK's client straight to the upstream: the client the gateway itself calls upstream with.
  const sdkClient = new Client({ name: 'bench', version: '1' });
  await sdkClient.connect(new StreamableHTTPClientTransport(new URL(upstreamUrl)));
  const viaSdk = async (): Promise<number[]> => {
    const times: number[] = [];
    for (let index = 0; index < CALLS; index++) {
      const started = performance.now();
      await sdkClient.callTool({ name: 'echo', arguments: { note: 'a short note to echo back', n: 42 } });
      times.push(performance.now() - started);
    }
    return times;
  };
  const sides = {
    direct: () => timed(upstreamUrl, call('echo'), { 'mcp-session-id': 'bench-session' }),
    gateway: () => timed(`${url}/mcp`, call('bench__echo'), gatewayHeaders),
    sdk: viaSdk,
  };
  // Warm up every path (JIT, the gateway's upstream connection, its caches).
  await sides.direct();
  await sides.gateway();
  await sides.sdk();
  const direct: number[] = [];
  const through: number[] = [];
  const sdk: number[] = [];
  // Main-thread CPU per call (ms), per round: what the machine's other load does not inflate.
  const cpu = { direct: [] as number[], gateway: [] as number[], sdk: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order so drift (GC, JIT, the log store, other processes) falls on every side.
    const order = (['direct', 'gateway', 'sdk'] as const).map((_, index, all) => all[(index + round) % all.length]);
    for (const side of order) {
      const before = process.threadCpuUsage();
      (side === 'direct' ? direct : side === 'gateway' ? through : sdk).push(...(await sides[side]()));
      const used = process.threadCpuUsage(before);
      cpu[side].push((used.user + used.system) / 1000 / CALLS);
    }
  }
  const overhead = percentile(through, 0.5) - percentile(direct, 0.5);
  const ms = (value: number) => `${value.toFixed(3)} ms`;
  process.stdout.write(`MCP tools/call, one at a time over one keep-alive connection (${ROUNDS} rounds of ${CALLS}; client, gateway and upstream share this process)\n`);
  process.stdout.write(`  direct to the upstream   p50 ${ms(percentile(direct, 0.5))}  p99 ${ms(percentile(direct, 0.99))}\n`);
  process.stdout.write(`  through the gateway      p50 ${ms(percentile(through, 0.5))}  p99 ${ms(percentile(through, 0.99))}\n`);
  process.stdout.write(`  the SDK client, direct   p50 ${ms(percentile(sdk, 0.5))}  p99 ${ms(percentile(sdk, 0.99))}  (the gateway's own upstream client, alone)\n`);
  process.stdout.write(`  main-thread CPU per call (median of rounds): direct ${ms(percentile(cpu.direct, 0.5))}, through the gateway ${ms(percentile(cpu.gateway, 0.5))}, SDK client ${ms(percentile(cpu.sdk, 0.5))}\n`);
  process.stdout.write(`  load average ${loadavg().map((value) => value.toFixed(1)).join(' ')} on ${availableParallelism()} cores\n`);
  process.stdout.write(`  goal: at most ${GOAL_MS} ms more at p50: ${overhead <= GOAL_MS ? 'PASS' : 'MISS'} (${ms(overhead)})\n`);

  const gc = (globalThis as { gc?: () => void }).gc;
  const settle = async () => {
    await gateway.flushLogs();
    for (let index = 0; index < 3; index++) {
      gc?.();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return process.memoryUsage();
  };
  const before = await settle();
  for (let index = 0; index < SESSIONS; index++) {
    const answer = await post(`${url}/mcp`, initialize, { authorization: `Bearer ${key}` });
    if (answer.status !== 200 || answer.headers['mcp-session-id'] === undefined) throw new Error(`initialize answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  }
  const after = await settle();
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  const heap = after.heapUsed - before.heapUsed;
  const budget = gateway.config.memoryBudgetBytes;
  process.stdout.write(`${SESSIONS} open sessions${gc ? '' : ' (no --expose-gc: figures include garbage)'}\n`);
  process.stdout.write(`  heap ${mb(before.heapUsed)} → ${mb(after.heapUsed)} (${mb(heap)}, ${Math.round(heap / SESSIONS)} bytes a session); RSS ${mb(before.rss)} → ${mb(after.rss)} (${mb(after.rss - before.rss)})\n`);
  process.stdout.write(`  goal: the sessions' heap within a tenth of the memory budget (${mb(budget / 10)}): ${heap <= budget / 10 ? 'PASS' : 'MISS'}\n`);

  agent.destroy();
  await sdkClient.close();
  await gateway.close();
  upstream.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/mcp failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
