import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { ACCOUNT_KEY, gatewayHeaders, startGateway, type TestGateway } from '../harness.js';
import { COMPLETION, sleep } from './raw-upstream.js';

// One upstream pool per origin, and custom hosts let callers name any number of origins: pools
// past `upstream.maxPools` are evicted (least recently used idle first), idle pools are closed
// after `upstream.poolIdleTimeoutMs`, and the per-origin metric series follow.

const ORIGINS = 12;
const MAX_POOLS = 4;

let gateway: TestGateway;
const servers: Server[] = [];
test.before(async () => {
  gateway = await startGateway({ upstream: { maxPools: MAX_POOLS, poolIdleTimeoutMs: 1000 } });
  for (let index = 0; index < ORIGINS; index++) {
    const server = createServer((request, response) => {
      request.resume();
      request.once('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(COMPLETION));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    servers.push(server);
  }
});
test.after.always(async () => {
  await gateway?.close();
  for (const server of servers) server.close();
});

/** The distinct `origin` values of the pool gauge, and how many series it has. */
async function poolSeries(): Promise<{ origins: Set<string>; series: number }> {
  const text = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
  const lines = [...text.matchAll(/^gateway_upstream_connections\{origin="([^"]*)"/gm)];
  return { origins: new Set(lines.map((match) => match[1])), series: lines.length };
}

test.serial('requests to many distinct origins keep the pool count and its metric series bounded', async (t) => {
  for (const server of servers) {
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: gatewayHeaders(`${origin}/v1`, { 'content-type': 'application/json' }),
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    t.is(response.status, 200);
    await response.arrayBuffer();
    const { origins, series } = await poolSeries();
    t.true(origins.size <= MAX_POOLS, `${origins.size} pools after ${origin}`);
    t.true(series <= MAX_POOLS * 3, `${series} series`);
    t.true(origins.has(origin), 'the pool just used is kept');
  }
});

test.serial('idle pools are closed after upstream.poolIdleTimeoutMs', async (t) => {
  const deadline = Date.now() + 5000;
  let origins = (await poolSeries()).origins;
  while (origins.size > 0 && Date.now() < deadline) {
    await sleep(200);
    origins = (await poolSeries()).origins;
  }
  t.is(origins.size, 0);
});
