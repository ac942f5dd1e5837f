import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import OpenAI from 'openai';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { PROVIDER_KEY } from './harness.js';
import { startCluster, stop, type Cluster } from './cluster-harness.js';

/** A request on a connection of its own, so that the cluster may hand it to either worker. */
const fresh = (url: string, init: RequestInit = {}) => fetch(url, { ...init, headers: { ...init.headers, connection: 'close' } });
const workerOf = async (url: string): Promise<number> => ((await (await fresh(`${url}/health`)).json()) as { worker: number }).worker;

/** Asks /health until both workers answered (the cluster hands connections out in turn). */
async function bothWorkers(url: string): Promise<Set<number>> {
  const seen = new Set<number>();
  for (let attempt = 0; attempt < 40 && seen.size < 2; attempt++) seen.add(await workerOf(url));
  return seen;
}

let fake: Fake;
let cluster: Cluster;
test.before(async () => {
  fake = await startFake();
  cluster = await startCluster();
});
test.after.always(async () => {
  if (cluster?.child.exitCode === null) await stop(cluster.child);
  await fake?.close();
});

const admin = (method: string, path: string, body?: unknown) =>
  fresh(`${cluster.url}${path}`, {
    method,
    headers: { 'x-gateway-api-key': cluster.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

test.serial('two workers answer on one port, and the first start prints the banner and the key once', async (t) => {
  t.deepEqual([...(await bothWorkers(cluster.url))].sort(), [1, 2]);
  t.is(cluster.output().match(/gateway listening on/g)?.length, 1);
  t.is(cluster.output().match(/A new account API key was generated/g)?.length, 1);
});

test.serial('a virtual key made on one worker works on both, its limit is counted once for both, and its deletion reaches both', async (t) => {
  const credential = (await (await admin('POST', '/admin/credentials', { name: 'cluster openai', provider: 'openai', api_key: PROVIDER_KEY })).json()) as { id: string };
  const created = await admin('POST', '/admin/virtual-keys', {
    name: 'cluster key',
    provider: 'openai',
    credential_id: credential.id,
    custom_host: fake.baseUrl,
    limits: { requests_per_minute: 5 },
  });
  t.is(created.status, 201);
  const { id, key } = (await created.json()) as { id: string; key: string };
  const client = new OpenAI({ apiKey: 'unused', baseURL: `${cluster.url}/v1`, defaultHeaders: { 'x-gateway-api-key': key, connection: 'close' }, maxRetries: 0 });
  const statuses: number[] = [];
  for (let index = 0; index < 8; index++) {
    statuses.push(
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hi ${index}` }] }).then(
        () => 200,
        (error: { status: number }) => error.status,
      ),
    );
  }
  t.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429], 'five a minute, whichever worker counts');
  const usage = (await (await admin('GET', `/admin/virtual-keys/${id}/usage`)).json()) as { requests: { day: number }; spend_usd: { total: number } };
  t.is(usage.requests.day, 5, 'both workers read the one counter');
  t.true(usage.spend_usd.total > 0, 'what each worker charged reached the primary');

  t.is((await admin('DELETE', `/admin/virtual-keys/${id}`)).status, 204);
  for (let index = 0; index < 4; index++) {
    const refused = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }] }).catch((error: { status: number }) => error);
    t.is((refused as { status: number }).status, 401, `request ${index}: the deleted key is gone on every worker`);
  }
});

test.serial('a dashboard session signed in on one worker holds on both, and signing out ends it on both', async (t) => {
  const signIn = await fresh(`${cluster.url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: cluster.key }) });
  t.is(signIn.status, 201);
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
  const { csrf_token: csrf } = (await signIn.json()) as { csrf_token: string };
  const asBrowser = { cookie, 'x-gateway-csrf': csrf };
  // node:cluster hands sequential connections to idle workers in turn: the admin call goes to the
  // worker that did not answer the /health call before it.
  const workers = new Set<number>();
  for (let index = 0; index < 8; index++) {
    const before = await workerOf(cluster.url);
    if (index % 2 === 1) await workerOf(cluster.url);
    const listed = await fresh(`${cluster.url}/admin/plugins`, { headers: asBrowser });
    t.is(listed.status, 200);
    workers.add(index % 2 === 1 ? before : 3 - before);
  }
  t.is(workers.size, 2, 'admin calls went to both workers');
  t.is((await fresh(`${cluster.url}/dashboard/session`, { method: 'DELETE', headers: asBrowser })).status, 204);
  for (let index = 0; index < 4; index++) t.is((await fresh(`${cluster.url}/admin/plugins`, { headers: asBrowser })).status, 401);
});

test.serial('/metrics sums every worker', async (t) => {
  const before = await requestsCounted();
  for (let index = 0; index < 6; index++) {
    await fresh(`${cluster.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-api-key': cluster.key, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': fake.baseUrl },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'count me' }] }),
    });
  }
  t.is((await requestsCounted()) - before, 6);
});

async function requestsCounted(): Promise<number> {
  const text = await (await admin('GET', '/metrics')).text();
  return [...text.matchAll(/^gateway_requests_total\{[^}]*operation="chat"[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
}

test.serial('an answer cached by one worker is a hit on the other as soon as it is sent', async (t) => {
  const credential = (await (await admin('POST', '/admin/credentials', { name: 'cluster cache openai', provider: 'openai', api_key: PROVIDER_KEY })).json()) as { id: string };
  const route = await admin('POST', '/admin/routes', {
    name: 'cluster-cached',
    route: { strategy: { mode: 'single' }, cache: { mode: 'simple', max_age: 600 }, targets: [{ provider: 'openai', credential: credential.id, custom_host: fake.baseUrl }] },
  });
  t.is(route.status, 201);
  const ask = (text: string) =>
    fresh(`${cluster.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': cluster.key, 'x-gateway-config': 'cluster-cached' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }),
    });
  // Each connection goes to the next idle worker in turn: the second request of a pair, sent as
  // soon as the first answer is read, is answered by the other worker.
  for (let index = 0; index < 6; index++) {
    const text = `cached across workers ${index}`;
    const miss = await ask(text);
    t.is(miss.status, 200);
    t.is(miss.headers.get('x-gateway-cache'), 'MISS');
    const stored = await miss.json();
    const hit = await ask(text);
    t.is(hit.headers.get('x-gateway-cache'), 'HIT', `pair ${index}: the other worker finds the stored answer`);
    t.deepEqual(await hit.json(), stored);
  }
});

test.serial('a worker that dies is started again; SIGTERM stops every process', async (t) => {
  const pid = /workers listening \(pids (\d+), (\d+)\)/.exec(cluster.output())!;
  process.kill(Number(pid[2]), 'SIGKILL');
  const deadline = Date.now() + 15_000;
  while (!/starting it again/.test(cluster.output()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.regex(cluster.output(), /worker 2 \(pid \d+\) exited \(SIGKILL\); starting it again/);
  const seen = new Set<number>();
  while (seen.size < 2 && Date.now() < deadline) seen.add(await workerOf(cluster.url).catch(() => 0));
  t.true(seen.has(2), 'worker 2 answers again');
  t.is(await stop(cluster.child), 0);
});

test('GATEWAY_WORKERS that is not a number of processes fails the start with the setting named', async (t) => {
  const child = spawn(process.execPath, ['dist/core/main.js', 'start'], {
    env: { PATH: process.env.PATH ?? '', GATEWAY_WORKERS: 'many', GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-cluster-')) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number];
  t.is(code, 1);
  t.regex(stderr, /GATEWAY_WORKERS must be a whole number from 1 to 256, or auto/);
});

test('a worker that cannot start (port in use) fails the start once, without being started again', async (t) => {
  const taken = createServer().listen(0, '127.0.0.1');
  await once(taken, 'listening');
  t.teardown(() => taken.close());
  const child = spawn(process.execPath, ['dist/core/main.js', 'start'], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String((taken.address() as AddressInfo).port), GATEWAY_WORKERS: '2', GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-cluster-')) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number];
  t.is(code, 1);
  t.regex(output, /gateway failed to start: .*worker 1 exited with code 1 before it listened/);
  t.notRegex(output, /starting it again/);
});
