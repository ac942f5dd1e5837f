import test from 'ava';
import { connect } from 'node:net';
import { bannedWords } from '../../plugins/guardrails/index.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';
import { azureOpenAI } from '../../plugins/providers/azure-openai/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { type RealtimeFake, startRealtimeFake } from '../fakes/realtime-fake.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { eventually, MODEL, outcomeOf, PRICING, rawSession, sdkSession } from './realtime-harness.js';

// Issue 36, the Realtime API over WebSocket (the relay): the official SDK's realtime client through the gateway
// to a loopback fake that follows the documented event sequence.

const PROVIDER_SECRET = 'sk-realtime-provider-secret-0123456789';

let fake: RealtimeFake;
let faulty: RealtimeFake;
let refusing: RealtimeFake;
let gateway: TestGateway;
let short: TestGateway;
let guarded: TestGateway;
let bounded: TestGateway;
let pressured: TestGateway;
let sequence = 0;

test.before(async () => {
  fake = await startRealtimeFake();
  faulty = await startRealtimeFake({ fault: 'abrupt' });
  refusing = await startRealtimeFake({ refuse: { status: 401, code: 'invalid_api_key', message: 'Incorrect API key provided.' } });
  gateway = await startGateway({ providers: [openai()], pricing: PRICING });
  short = await startGateway({ providers: [openai()], pricing: PRICING, realtime: { maxSessionMs: 300 } });
  bounded = await startGateway({ providers: [openai()], pricing: PRICING, realtime: { idleTimeoutMs: 250, maxFrameBytes: 1024 } });
  pressured = await startGateway({ providers: [openai()], pricing: PRICING, realtime: { maxBufferedBytes: 64 * 1024 } });
  guarded = await startGateway({
    providers: [openai()],
    pricing: PRICING,
    policies: { voice: { input: [bannedWords({ words: ['forbidden'] })], output: [bannedWords({ words: ['secretword'] })] } },
    defaultPolicy: 'voice',
  });
});

test.after.always(async () => {
  for (const started of [gateway, short, guarded, bounded, pressured]) await started?.close();
  for (const started of [fake, faulty, refusing]) await started?.close();
});

const keyOn = (on: TestGateway, t: Parameters<typeof createKey>[0], upstream: RealtimeFake, limits: Record<string, unknown> = {}) =>
  createKey(t, on, { name: `realtime-${process.pid}-${++sequence}`, provider: 'openai', provider_key: PROVIDER_SECRET, custom_host: upstream.baseUrl, limits });

/** The stored log record of the session entry with this trace id. */
async function storedRecord(on: TestGateway, traceId: string) {
  await on.gateway.flushLogs();
  const listed = await admin(on, 'GET', `/admin/logs?trace_id=${traceId}`);
  const id = (listed.json.data ?? listed.json.logs ?? listed.json).find?.((row: { trace_id: string }) => row.trace_id === traceId)?.id;
  return (await admin(on, 'GET', `/admin/logs/${id}`)).json;
}

test.serial('the SDK runs a session through the gateway: the documented events both ways, usage charged as it arrives, one log entry', async (t) => {
  const key = await keyOn(gateway, t, fake, { budget_usd: 10 });
  const before = fake.sessions.length;
  const session = sdkSession(gateway.url, key.key);
  const created = await session.next('session.created');
  t.is(created.session.model, MODEL);
  session.rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'Be brief.' } } as never);
  await session.next('session.updated');
  session.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello.' }] } });
  await session.next('conversation.item.created');
  session.rt.send({ type: 'response.create' });
  const done = await session.next('response.done');

  const types = session.events.map((event) => event.type);
  t.deepEqual(types.filter((type) => type !== 'response.output_text.delta'), [
    'session.created',
    'session.updated',
    'conversation.item.created',
    'response.created',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.done',
  ]);
  t.is(session.events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta).join(''), 'Hello from the fake.');
  t.deepEqual(done.response.usage.input_tokens, 12);
  t.deepEqual(session.errors, []);

  // The provider got its own key from the vault, never the caller's; the caller never saw the provider's.
  const upstream = fake.sessions[before];
  t.is(upstream.headers.authorization, `Bearer ${PROVIDER_SECRET}`);
  t.false(JSON.stringify(upstream.headers).includes(key.key));
  t.true(upstream.url.startsWith(`/v1/realtime?model=${MODEL}`));
  t.deepEqual(upstream.received.map((event) => event.type), ['session.update', 'conversation.item.create', 'response.create']);
  const upgrade = await session.upgradeHeaders;
  t.false(JSON.stringify(upgrade).includes(PROVIDER_SECRET));
  t.false(JSON.stringify(session.events).includes(PROVIDER_SECRET));
  t.is(upgrade['x-gateway-provider'], 'openai');

  // Charged while the session is still open: 12 × $1 + 8 × $2 per million tokens.
  const spent = await eventually(async () => {
    const usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${key.id}/usage`)).json;
    return usage.spend_usd.total > 0 ? usage.spend_usd.total : undefined;
  }, 'the charge of response.done');
  t.is(spent, 0.000028);

  session.rt.close();
  t.is((await session.closed).code, 1000);
  const entry = await eventually(async () => gateway.entries().find((logged) => logged.operation === 'realtime' && logged.keyId === key.id), 'the session entry');
  t.like(entry, { operation: 'realtime', status: 101, outcome: 'ok', provider: 'openai', model: MODEL, path: '/v1/realtime', streaming: true, costUsd: 0.000028 });
  t.like(entry.usage, { promptTokens: 12, completionTokens: 8, totalTokens: 20 });
  t.is(gateway.entries().filter((logged) => logged.keyId === key.id).length, 1);
  // Not charged twice at the end, and nothing left reserved.
  const usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${key.id}/usage`)).json;
  t.is(usage.spend_usd.total, 0.000028);
  t.is(usage.reserved_usd, 0);

  const record = await storedRecord(gateway, entry.traceId);
  const summary = JSON.parse(record.response_body);
  t.is(summary.object, 'realtime.session.summary');
  t.like(summary.events.client, { 'session.update': 1, 'conversation.item.create': 1, 'response.create': 1 });
  t.like(summary.events.server, { 'session.created': 1, 'response.done': 1, 'response.output_text.delta': 5 });
  t.is(summary.responses, 1);
  t.deepEqual(summary.transcripts, [{ role: 'assistant', text: 'Hello from the fake.' }]);
  t.like(summary.closed, { by: 'client', code: 1000 });
  t.false(gateway.rawLog().includes(PROVIDER_SECRET));
  t.false(gateway.rawLog().includes(key.key));
});

test.serial("a browser's subprotocol key: admitted, never echoed nor sent upstream; the beta interface asked for", async (t) => {
  const key = await keyOn(gateway, t, fake);
  const before = fake.sessions.length;
  const socket = rawSession(gateway.url, { protocols: ['realtime', `openai-insecure-api-key.${key.key}`, 'openai-beta.realtime-v1'] });
  const outcome = await outcomeOf(socket);
  t.deepEqual(outcome, { opened: true, protocol: 'realtime' });
  const upstream = fake.sessions[before];
  t.is(upstream.headers['openai-beta'], 'realtime=v1');
  t.is(upstream.headers.authorization, `Bearer ${PROVIDER_SECRET}`);
  t.false(JSON.stringify(upstream.headers).includes(key.key));
  socket.close();
});

test.serial('limits refuse a session before the upgrade, with the usual JSON error and status', async (t) => {
  const perMinute = await keyOn(gateway, t, fake, { requests_per_minute: 1 });
  const first = rawSession(gateway.url, { headers: { 'x-gateway-api-key': perMinute.key } });
  t.like(await outcomeOf(first), { opened: true });
  first.close();
  const before = fake.sessions.length;
  const second = await outcomeOf(rawSession(gateway.url, { headers: { 'x-gateway-api-key': perMinute.key } }));
  t.like(second, { opened: false, status: 429 });
  if (second.opened) return;
  t.is(second.body.error.code, 'rate_limit_exceeded');
  t.is(second.headers['x-ratelimit-limit-requests'], '1');
  t.is(fake.sessions.length, before, 'nothing was opened upstream');

  const poor = await keyOn(gateway, t, fake, { budget_usd: 0.000001 });
  const refused = await outcomeOf(rawSession(gateway.url, { headers: { 'x-gateway-api-key': poor.key } }));
  t.like(refused, { opened: false, status: 403 });
  if (!refused.opened) t.is(refused.body.error.code, 'budget_exceeded');

  const anonymous = await outcomeOf(rawSession(gateway.url));
  t.like(anonymous, { opened: false, status: 401 });
  if (!anonymous.opened) t.is(anonymous.body.error.code, 'missing_api_key');
  const noModel = await outcomeOf(rawSession(gateway.url, { headers: { 'x-gateway-api-key': poor.key }, model: '' }));
  t.like(noModel, { opened: false, status: 400 });
  t.is(fake.sessions.length, before, 'no refused session reached the provider');
});

test.serial("the provider's refusal of the handshake is mapped like any upstream error, before the upgrade", async (t) => {
  const key = await keyOn(gateway, t, refusing);
  const outcome = await outcomeOf(rawSession(gateway.url, { headers: { 'x-gateway-api-key': key.key } }));
  t.like(outcome, { opened: false, status: 401 });
  if (!outcome.opened) t.like(outcome.body.error, { code: 'invalid_api_key', provider: 'openai' });
});

test.serial('a session is cut at its maximum length: an error event, then close 1008', async (t) => {
  const key = await keyOn(short, t, fake);
  const session = sdkSession(short.url, key.key);
  await session.next('session.created');
  const expired = await session.next('error');
  t.is(expired.error.code, 'session_expired');
  const closed = await session.closed;
  t.deepEqual(closed, { code: 1008, reason: 'session_expired' });
  const entry = await eventually(async () => short.entries().find((logged) => logged.keyId === key.id), 'the session entry');
  const summary = JSON.parse((await storedRecord(short, entry.traceId)).response_body);
  t.like(summary.closed, { by: 'gateway', code: 1008, reason: 'session_expired' });
  t.is(summary.errors[0].code, 'session_expired');
});

test.serial('a fault in the middle: the provider drops the connection mid-response; the client is told and closed 1011, the entry says stream_error', async (t) => {
  const key = await keyOn(gateway, t, faulty);
  const session = sdkSession(gateway.url, key.key);
  await session.next('session.created');
  session.rt.send({ type: 'response.create' });
  const error = await session.next('error');
  t.like(error.error, { type: 'server_error', code: 'upstream_closed' });
  t.true(session.events.some((event) => event.type === 'response.output_text.delta'), 'the response had started');
  t.is((await session.closed).code, 1011);
  const entry = await eventually(async () => gateway.entries().find((logged) => logged.keyId === key.id), 'the session entry');
  t.like(entry, { operation: 'realtime', outcome: 'stream_error' });
  t.is(entry.error?.code, 'upstream_closed');
});

test.serial('guardrails: a denied conversation item is not sent; a denied answer ends its response with content_filter', async (t) => {
  const key = await keyOn(guarded, t, fake);
  const before = fake.sessions.length;
  const session = sdkSession(guarded.url, key.key);
  await session.next('session.created');
  session.rt.send({ type: 'conversation.item.create', event_id: 'client-1', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'this is forbidden' }] } });
  const denied = await session.next('error');
  t.like(denied.error, { code: 'guardrail_denied', event_id: 'client-1' });
  fake.behaviour = { text: 'the secretword is out' };
  try {
    session.rt.send({ type: 'response.create' });
    const done = await session.next('response.done');
    t.like(done.response, { status: 'incomplete', status_details: { type: 'incomplete', reason: 'content_filter' } });
    t.false(JSON.stringify(session.events).includes('secretword'), 'no part of the denied text reached the client');
    const upstream = fake.sessions[before];
    await eventually(async () => (upstream.received.some((event) => event.type === 'response.cancel') ? true : undefined), 'the cancel upstream');
    t.false(upstream.received.some((event) => event.type === 'conversation.item.create'), 'the denied item never reached the provider');
  } finally {
    fake.behaviour = {};
  }
  session.rt.close();
  const entry = await eventually(async () => guarded.entries().find((logged) => logged.keyId === key.id), 'the session entry');
  t.deepEqual(entry.guardrails.filter((verdict) => verdict.action === 'deny').map((verdict) => verdict.side), ['input', 'output']);
  const record = await storedRecord(guarded, entry.traceId);
  t.false(JSON.stringify(record).includes('secretword'));
  t.false(guarded.rawLog().includes('secretword'));
});

test.serial('an idle session is closed (error event session_idle_timeout, then 1008)', async (t) => {
  const key = await keyOn(bounded, t, fake);
  const session = sdkSession(bounded.url, key.key);
  await session.next('session.created');
  const idle = await session.next('error');
  t.is(idle.error.code, 'session_idle_timeout');
  t.deepEqual(await session.closed, { code: 1008, reason: 'session_idle_timeout' });
});

test.serial('a message over realtime.maxFrameBytes closes the session (1009) and never reaches the provider', async (t) => {
  const key = await keyOn(bounded, t, fake);
  const before = fake.sessions.length;
  const session = sdkSession(bounded.url, key.key);
  await session.next('session.created');
  session.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'x'.repeat(2048) }] } });
  t.is((await session.closed).code, 1009);
  const upstream = fake.sessions[before];
  await eventually(async () => (upstream.socket.readyState === upstream.socket.CLOSED ? true : undefined), 'the provider side closed');
  t.deepEqual(upstream.received, []);
  const entry = await eventually(async () => bounded.entries().find((logged) => logged.keyId === key.id), 'the session entry');
  const summary = JSON.parse((await storedRecord(bounded, entry.traceId)).response_body);
  t.true(summary.errors.some((error: { code: string }) => error.code === 'frame_too_large'));
});

test.serial("back-pressure: while the client does not read, the gateway stops reading the provider; nothing is lost", async (t) => {
  const key = await keyOn(pressured, t, fake);
  const before = fake.sessions.length;
  const client = rawSession(pressured.url, { headers: { 'x-gateway-api-key': key.key } });
  t.like(await outcomeOf(client), { opened: true });
  const received: string[] = [];
  client.on('message', (data) => {
    const event = JSON.parse(data.toString());
    if (event.type === 'response.output_audio.delta') received.push(event.event_id);
  });
  client.pause();
  const upstream = fake.sessions[before].socket;
  const delta = 'A'.repeat(64 * 1024);
  const count = 600;
  for (let index = 0; index < count; index++) upstream.send(JSON.stringify({ type: 'response.output_audio.delta', event_id: `audio-${index}`, delta }));
  // ~39 MB sent: the two connections' kernel buffers hold some MB at most; the rest must wait on the
  // provider's side, not in the gateway. Watched for 2 s: a gateway reading on would drain it.
  let least = upstream.bufferedAmount;
  for (let check = 0; check < 40 && least > 16 * 1024 * 1024; check++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    least = Math.min(least, upstream.bufferedAmount);
  }
  t.true(least > 16 * 1024 * 1024, `the provider's queue fell to ${least} bytes`);
  client.resume();
  await eventually(async () => (received.length === count ? true : undefined), 'every event', 1000);
  t.deepEqual(received, Array.from({ length: count }, (_, index) => `audio-${index}`));
  client.close();
});

test.serial("Azure OpenAI: the v1 API's realtime URL on the deployment, the key as api-key; the dated API with an api-version", async (t) => {
  const azure = await startGateway({ providers: [openai(), azureOpenAI(), anthropic()], pricing: PRICING });
  try {
    const origin = fake.baseUrl.replace(/\/v1$/, '');
    const headers = { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'azure-openai', 'x-gateway-custom-host': `${origin}/openai`, authorization: `Bearer ${PROVIDER_SECRET}`, 'x-gateway-cloud-a-deployment-id': 'my-realtime' };
    const before = fake.sessions.length;
    const v1 = rawSession(azure.url, { headers });
    t.like(await outcomeOf(v1), { opened: true });
    t.is(fake.sessions[before].url, '/openai/v1/realtime?model=my-realtime');
    t.is(fake.sessions[before].headers['api-key'], PROVIDER_SECRET);
    t.is(fake.sessions[before].headers.authorization, undefined);
    v1.close();
    const dated = rawSession(azure.url, { headers: { ...headers, 'x-gateway-cloud-a-api-version': '2025-04-01-preview' } });
    t.like(await outcomeOf(dated), { opened: true });
    t.is(fake.sessions[before + 1].url, '/openai/realtime?api-version=2025-04-01-preview&deployment=my-realtime');
    dated.close();
    // A provider whose plugin declares no realtime operation: refused before anything is opened.
    const count = fake.sessions.length;
    const refused = await outcomeOf(rawSession(azure.url, { headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': fake.baseUrl, 'x-api-key': 'sk-ant-x' } }));
    t.like(refused, { opened: false, status: 400 });
    if (!refused.opened) t.like(refused.body.error, { code: 'unsupported_operation', param: 'x-gateway-provider' });
    t.is(fake.sessions.length, count);
  } finally {
    await azure.close();
  }
});


test.serial("other upgrade requests are served as plain requests, as before (curl's Upgrade: h2c)", async (t) => {
  const { port } = new URL(gateway.url);
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET /health HTTP/1.1\r\nHost: gateway\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n'));
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString();
      if (text.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
  });
  t.regex(answer, /^HTTP\/1\.1 200 /);
});
