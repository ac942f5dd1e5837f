import type { ServerResponse } from 'node:http';
import test from 'ava';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, fixedUsageHandler } from '../vault/vault-harness.js';
import { advance, ManualClock, quotaChat, quotaSetup, queueDepth, untilDepth } from './quota-harness.js';

// The queue of a provider's quota: deadlines (429 with Retry-After), interactive before batch,
// a client that leaves, and the concurrency slot freed when an answer ends (streams included).

let gateway: TestGateway;
let clock: ManualClock;
let fake: Fake;
test.before(async () => {
  clock = new ManualClock();
  gateway = await startGateway({}, {}, { quota: { clock } });
  fake = await startFake(fixedUsageHandler(0));
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

test.serial('a queued request past max_wait_ms gets 429 quota_wait_exceeded with Retry-After', async (t) => {
  const { credentialId, keys } = await quotaSetup(t, gateway, fake.baseUrl, { requests_per_minute: 1, max_wait_ms: 2000 }, { a: undefined }, 'deadline');
  t.is((await quotaChat(gateway, keys.a)).status, 200);
  const waiting = quotaChat(gateway, keys.a);
  await untilDepth(t, gateway, credentialId, 1);
  await clock.advance(1999);
  t.is(await queueDepth(gateway, credentialId), 1, 'still waiting before its deadline');
  await clock.advance(1);
  const refused = await waiting;
  t.is(refused.status, 429);
  t.is(refused.json.error.code, 'quota_wait_exceeded');
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.true(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 61, `Retry-After: ${refused.headers.get('retry-after')}`);
  t.is(await queueDepth(gateway, credentialId), 0);
  const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
  t.true(metrics.includes(`gateway_quota_refusals_total{quota="cred:${credentialId}",reason="wait_exceeded"} 1`), 'the refusal is counted');
  t.true(metrics.includes(`gateway_quota_wait_seconds_count{quota="cred:${credentialId}",outcome="timeout"} 1`), 'and its wait');
  t.true(metrics.includes(`gateway_quota_wait_seconds_sum{quota="cred:${credentialId}",outcome="timeout"} 2`), 'of 2 simulated seconds');
  t.true(metrics.includes(`gateway_quota_queue_depth{quota="cred:${credentialId}"} 0`));
});

test.serial('interactive requests leave the queue before batch ones (a batch key, or x-gateway-priority: batch), first come first served within a class', async (t) => {
  const { credentialId, keys } = await quotaSetup(t, gateway, fake.baseUrl, { requests_per_minute: 1, max_wait_ms: 600_000 }, { a: undefined }, 'priority');
  const team = (await admin(gateway, 'GET', '/admin/virtual-keys')).json.data.find((key: { name: string }) => key.name === 'a-priority').team_id;
  const batchKey = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'batch-priority', provider: 'openai', credential_id: credentialId, custom_host: fake.baseUrl, team_id: team, priority: 'batch' });
  t.is(batchKey.status, 201);
  t.is(batchKey.json.priority, 'batch');
  t.is((await quotaChat(gateway, keys.a)).status, 200);
  const order: string[] = [];
  const send = (name: string, key: string, headers: Record<string, string> = {}) => quotaChat(gateway, key, headers).then((answer) => order.push(`${name} ${answer.status}`));
  const first = send('batch-key', batchKey.json.key);
  await untilDepth(t, gateway, credentialId, 1);
  const second = send('batch-header', keys.a, { 'x-gateway-priority': 'batch' });
  await untilDepth(t, gateway, credentialId, 2);
  const third = send('interactive-1', keys.a);
  await untilDepth(t, gateway, credentialId, 3);
  const fourth = send('interactive-2', keys.a, { 'x-gateway-priority': 'interactive' });
  await untilDepth(t, gateway, credentialId, 4);
  for (let depth = 3; depth >= 0; depth--) {
    await advance(clock, 61_000); // one request per minute: the window frees one place
    await untilDepth(t, gateway, credentialId, depth);
    while (order.length < 4 - depth) await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await Promise.all([first, second, third, fourth]);
  t.deepEqual(order, ['interactive-1 200', 'interactive-2 200', 'batch-key 200', 'batch-header 200']);
});

test.serial('x-gateway-priority other than interactive or batch: 400 naming the header; priority and quota_weight are checked by the admin API', async (t) => {
  const { keys, credentialId } = await quotaSetup(t, gateway, fake.baseUrl, { requests_per_minute: 100 }, { a: 2 }, 'header');
  const refused = await quotaChat(gateway, keys.a, { 'x-gateway-priority': 'urgent' });
  t.is(refused.status, 400);
  t.is(refused.json.error.param, 'x-gateway-priority');
  const badKey = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'bad-priority', provider: 'openai', credential_id: credentialId, priority: 'urgent' });
  t.is(badKey.status, 400);
  t.is(badKey.json.error.param, 'priority');
  const badTeam = await admin(gateway, 'POST', '/admin/teams', { name: 'bad-weight', quota_weight: 0 });
  t.is(badTeam.status, 400);
  t.is(badTeam.json.error.param, 'quota_weight');
  const teams = (await admin(gateway, 'GET', '/admin/teams')).json.data;
  t.is(teams.find((team: { name: string }) => team.name === 'a-header').quota_weight, 2);
  t.is(teams.find((team: { name: string }) => team.name === 'default')?.quota_weight ?? 1, 1);
  for (const [quota, param] of [
    [{ tokens_per_minute: -1 }, 'quota.tokens_per_minute'],
    [{ max_wait_ms: 1000 }, 'quota'],
    [{ requests_per_minute: 10, max_concurrent: 1.5 }, 'quota.max_concurrent'],
    [{ rpm: 10 }, 'quota.rpm'],
    ['fast', 'quota'],
  ] as const) {
    const answer = await admin(gateway, 'POST', '/admin/credentials', { name: `bad-${param}-${JSON.stringify(quota)}`, api_key: 'sk-bad-0123456789', quota });
    t.is(answer.status, 400, JSON.stringify(quota));
    t.is(answer.json.error.param, param);
  }
  const patched = await admin(gateway, 'PATCH', `/admin/credentials/${credentialId}`, { quota: { tokens_per_minute: 1000 } });
  t.is(patched.status, 200);
  t.deepEqual(patched.json.quota, { tokens_per_minute: 1000 });
  t.is((await admin(gateway, 'PATCH', `/admin/credentials/${credentialId}`, { quota: { max_concurrent: 0 } })).json.error.param, 'quota.max_concurrent');
  const removed = await admin(gateway, 'PATCH', `/admin/credentials/${credentialId}`, { quota: null });
  t.is(removed.status, 200);
  t.is(removed.json.quota, undefined);
});

test.serial('a client that leaves while waiting leaves the queue', async (t) => {
  const { credentialId, keys } = await quotaSetup(t, gateway, fake.baseUrl, { requests_per_minute: 1, max_wait_ms: 600_000 }, { a: undefined }, 'leave');
  t.is((await quotaChat(gateway, keys.a)).status, 200);
  const controller = new AbortController();
  const waiting = quotaChat(gateway, keys.a, {}, controller.signal).catch((error: Error) => error.name);
  await untilDepth(t, gateway, credentialId, 1);
  controller.abort();
  t.is(await waiting, 'AbortError');
  await untilDepth(t, gateway, credentialId, 0);
  const sent = fake.requests.length;
  await advance(clock, 61_000);
  t.is(fake.requests.length, sent, 'the request that left was never sent');
});

/** A fake that streams a first chunk, then holds the stream open until `finish()` is called. */
function holdingStream() {
  const held: Array<() => void> = [];
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const handler = (request: RecordedRequest, response: ServerResponse) => {
    if (!request.json().stream) return fixedUsageHandler(0)(request, response);
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(chunk({ role: 'assistant', content: 'hi' }, null));
    held.push(() => {
      response.write(chunk({}, 'stop'));
      response.end(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 60, completion_tokens: 1, total_tokens: 61 } })}\n\ndata: [DONE]\n\n`);
    });
  };
  return { handler, held };
}

/** Opens a streamed chat and resolves once its first chunk arrived, with the rest of the body to read. */
async function openStream(target: TestGateway, key: string, signal?: AbortSignal) {
  const response = await fetch(`${target.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], max_tokens: 5, stream: true }),
    signal,
  });
  if (response.status !== 200) throw new Error(`the stream answered ${response.status}: ${await response.text()}`);
  const reader = response.body!.getReader();
  await reader.read();
  return { response, reader };
}

test.serial('max_concurrent: the slot is freed when a stream ends, and when its client leaves mid-stream', async (t) => {
  const stream = holdingStream();
  const streaming = await startFake(stream.handler);
  // The real clock: a waiter is woken by the release itself, well before its deadline.
  const real = await startGateway();
  try {
    const { credentialId, keys } = await quotaSetup(t, real, streaming.baseUrl, { max_concurrent: 1, max_wait_ms: 30_000 }, { a: undefined }, 'slots');
    const first = await openStream(real, keys.a);
    const second = quotaChat(real, keys.a);
    await untilDepth(t, real, credentialId, 1);
    stream.held.shift()!();
    while (!(await first.reader.read()).done);
    t.is((await second).status, 200, 'the next request got the slot once the stream ended');

    const controller = new AbortController();
    const third = await openStream(real, keys.a, controller.signal);
    const fourth = quotaChat(real, keys.a);
    await untilDepth(t, real, credentialId, 1);
    controller.abort();
    await third.reader.read().catch(() => undefined);
    t.is((await fourth).status, 200, 'the next request got the slot once the client left');
  } finally {
    await real.close();
    await streaming.close();
  }
});

test.serial('a request estimated above the whole tokens_per_minute is refused at once, saying why', async (t) => {
  const { credentialId, keys } = await quotaSetup(t, gateway, fake.baseUrl, { tokens_per_minute: 50, max_wait_ms: 600_000 }, { a: undefined }, 'too-big');
  const refused = await quotaChat(gateway, keys.a);
  t.is(refused.status, 429);
  t.is(refused.json.error.code, 'quota_wait_exceeded');
  t.regex(refused.json.error.message, /alone is estimated at 100 tokens/);
  t.is(await queueDepth(gateway, credentialId), 0);
});
