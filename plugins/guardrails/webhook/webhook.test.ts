import test from 'ava';
import axios from 'axios';
import nock from 'nock';
import { step } from '../../../core/guardrails/policy.js';
import { answering, ask, assertDenied, assertRefused, bootError, judge, policyGateway } from '../../../test/guardrails/helpers.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { replyVerdict, REPLY_SIGNATURE_HEADER, SIGNATURE_HEADER, sign, signatureMatches, TIMESTAMP_HEADER, webhook } from './index.js';

const SECRET = 'whsec-test-0123456789abcdef';
const HOST = 'http://guardrail.test';

test.before(() => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1/);
});
test.afterEach.always(() => nock.cleanAll());
test.after.always(() => nock.enableNetConnect());

/** A nock webhook that checks the request's signature and answers `reply`, signed with `replySecret`. */
function hook(reply: object, options: { replySecret?: string; delayMs?: number; seen?: object[] } = {}) {
  return nock(HOST)
    .post('/check')
    .delay(options.delayMs ?? 0)
    .reply(async (request: Request) => {
      // nock 15 hands the reply function the request as a fetch Request.
      const raw = await request.text();
      const timestamp = request.headers.get(TIMESTAMP_HEADER) ?? '';
      if (request.headers.get(SIGNATURE_HEADER) !== sign(SECRET, timestamp, raw)) return [401, 'bad signature'];
      options.seen?.push(JSON.parse(raw));
      const answer = JSON.stringify(reply);
      return [200, answer, { 'content-type': 'application/json', [REPLY_SIGNATURE_HEADER]: sign(options.replySecret ?? SECRET, timestamp, answer) }];
    });
}

test.serial('params: url and a secret of 16+ characters are required; the secret is never listed', (t) => {
  assertRefused(t, webhook({ url: 'ftp://x', secret: SECRET }), '/url');
  assertRefused(t, webhook({ url: `${HOST}/check`, secret: 'short' }), '/secret');
  assertRefused(t, webhook({ url: `${HOST}/check` } as never), 'secret');
  t.is(bootError(webhook({ url: `${HOST}/check`, secret: SECRET, timeoutMs: 100 })), undefined);
});

test.serial('allow, deny and transform replies map to verdicts; the payload carries the texts', async (t) => {
  const seen: object[] = [];
  const guardrail = webhook({ url: `${HOST}/check`, secret: SECRET });
  hook({ verdict: 'allow' }, { seen });
  t.deepEqual(await judge(guardrail, ['héllo 👋'], { metadata: { team: 'a' } }), { action: 'allow' });
  t.like(seen[0], { side: 'input', operation: 'chat', model: 'gpt-4o', texts: ['héllo 👋'], metadata: { team: 'a' } });
  hook({ verdict: 'deny', reason: 'policy 7' });
  t.deepEqual(await judge(guardrail, ['x']), { action: 'deny', reason: 'webhook: policy 7' });
  hook({ verdict: 'transform', texts: ['[masked]'], changes: { name: 1 } });
  t.deepEqual(await judge(guardrail, ['Ana']), { action: 'transform', texts: ['[masked]'], changes: { name: 1 } });
});

test.serial('a reply with a bad signature is refused: the step fails closed (deny) or open (allow)', async (t) => {
  hook({ verdict: 'allow' }, { replySecret: 'someone-else-secret-000' });
  const closed = await policyGateway({ input: [webhook({ url: `${HOST}/check`, secret: SECRET })] }, answering('ok'));
  t.teardown(() => closed.close());
  await assertDenied(t, ask(closed.client, 'hi'));
  t.is(closed.fake.requests.length, 0);
  const [entry] = await closed.gateway.waitForEntries(1);
  t.like(entry.guardrails[0], { guardrail: 'webhook', action: 'deny', failure: 'error' });
  t.true(nock.isDone());

  hook({ verdict: 'deny' }, { replySecret: 'someone-else-secret-000' });
  const open = await policyGateway({ input: [step(webhook({ url: `${HOST}/check`, secret: SECRET }), { onError: 'fail-open' })] }, answering('ok'));
  t.teardown(() => open.close());
  // The forged "deny" is not believed either way: fail-open lets the request through.
  t.like(await ask(open.client, 'hi'), { content: 'ok' });
  const [openEntry] = await open.gateway.waitForEntries(1);
  t.like(openEntry.guardrails[0], { guardrail: 'webhook', action: 'allow', failure: 'error' });
  t.true(nock.isDone());
});

test.serial('a non-ASCII reply signature of the right length in characters is refused cleanly (no RangeError)', async (t) => {
  const expected = sign(SECRET, '1', '{}');
  const forged = `${expected.slice(0, -1)}é`;
  t.is(forged.length, expected.length);
  t.false(signatureMatches(expected, forged));
  t.false(signatureMatches(expected, undefined));
  t.true(signatureMatches(expected, expected));
  const scope = nock(HOST)
    .post('/check')
    .reply(async (request: Request) => {
      const answer = JSON.stringify({ verdict: 'allow' });
      const good = sign(SECRET, request.headers.get(TIMESTAMP_HEADER) ?? '', answer);
      return [200, answer, { 'content-type': 'application/json', [REPLY_SIGNATURE_HEADER]: `${good.slice(0, -1)}é` }];
    });
  const error = await t.throwsAsync(judge(webhook({ url: `${HOST}/check`, secret: SECRET }), ['x']));
  t.is(error?.message, 'webhook reply signature is missing or wrong');
  t.true(scope.isDone());
});

test.serial('a wrong shared secret: the webhook refuses the request (401) and the check fails, for the fail mode to decide', async (t) => {
  const scope = hook({ verdict: 'allow' });
  const error = await t.throwsAsync(judge(webhook({ url: `${HOST}/check`, secret: 'not-the-shared-secret-x' }), ['x']));
  t.regex(error?.message ?? '', /401/);
  t.true(scope.isDone());
});

test.serial('timeout: fail-closed denies, fail-open allows, and the log records the timeout', async (t) => {
  const closed = await policyGateway({ input: [step(webhook({ url: `${HOST}/check`, secret: SECRET }), { timeoutMs: 50 })] }, answering('ok'));
  t.teardown(() => closed.close());
  hook({ verdict: 'allow' }, { delayMs: 400 });
  await assertDenied(t, ask(closed.client, 'hi'));
  const [entry] = await closed.gateway.waitForEntries(1);
  t.like(entry.guardrails[0], { guardrail: 'webhook', action: 'deny', failure: 'timeout' });

  const open = await policyGateway({ input: [step(webhook({ url: `${HOST}/check`, secret: SECRET }), { timeoutMs: 50, onError: 'fail-open' })] }, answering('ok'));
  t.teardown(() => open.close());
  hook({ verdict: 'allow' }, { delayMs: 400 });
  t.like(await ask(open.client, 'hi'), { content: 'ok' });
  const [openEntry] = await open.gateway.waitForEntries(1);
  t.like(openEntry.guardrails[0], { guardrail: 'webhook', action: 'allow', failure: 'timeout' });
});

test.serial('through the gateway: a deny reply refuses the request; an allow reply lets it through', async (t) => {
  const setup = await policyGateway({ input: [webhook({ url: `${HOST}/check`, secret: SECRET })] }, answering('ok'));
  t.teardown(() => setup.close());
  hook({ verdict: 'deny', reason: 'no' });
  await assertDenied(t, ask(setup.client, 'hi'));
  hook({ verdict: 'allow' });
  t.like(await ask(setup.client, 'hi'), { content: 'ok' });
  const listing = await fetch(`${setup.gateway.url}/admin/policies`, { headers: { 'x-gateway-api-key': 'gw-test-account-key-0123456789' } });
  const text = await listing.text();
  t.false(text.includes(SECRET));
  t.true(text.includes('[hidden]'));
});

test.serial('the webhook calls through the control-plane client and reads the clock it is given', async (t) => {
  const http = axios.create();
  const called: string[] = [];
  http.interceptors.request.use((config) => {
    called.push(`${config.method} ${config.url}`);
    return config;
  });
  const clock = { now: () => 1_700_000_000_000 };
  const timestamps: string[] = [];
  const scope = nock(HOST)
    .post('/check')
    .reply(async (request: Request) => {
      const timestamp = request.headers.get(TIMESTAMP_HEADER) ?? '';
      timestamps.push(timestamp);
      const answer = JSON.stringify({ verdict: 'allow' });
      return [200, answer, { [REPLY_SIGNATURE_HEADER]: sign(SECRET, timestamp, answer) }];
    });
  const plugin = webhook({ url: `${HOST}/check`, secret: SECRET }).create(pluginDependencies({ http, clock }));
  const verdict = await plugin.check({ side: 'input', operation: 'chat', model: 'gpt-4o', texts: ['x'], metadata: {}, parameters: {}, partial: false });
  t.deepEqual(verdict, { action: 'allow' });
  t.deepEqual(called, [`post ${HOST}/check`]);
  t.deepEqual(timestamps, ['1700000000000']);
  t.true(scope.isDone());
});

test('a reply may list what it flagged (strings only, at most 1000), for the log to mask', (t) => {
  t.deepEqual(replyVerdict({ verdict: 'deny', reason: 'card', flagged: ['4111111111111111'] }, 1), { action: 'deny', reason: 'webhook: card', flagged: ['4111111111111111'] });
  t.deepEqual(replyVerdict({ verdict: 'transform', texts: ['[x]'], changes: { card: 1 }, flagged: ['4111111111111111'] }, 1), {
    action: 'transform',
    texts: ['[x]'],
    changes: { card: 1 },
    flagged: ['4111111111111111'],
  });
  // Not a list of strings, or too long: left out, so the log masks the texts the verdict denied.
  t.deepEqual(replyVerdict({ verdict: 'deny', flagged: [1, 2] }, 1), { action: 'deny', reason: 'webhook denied' });
  t.deepEqual(replyVerdict({ verdict: 'deny', flagged: Array.from({ length: 1001 }, () => 'x') }, 1), { action: 'deny', reason: 'webhook denied' });
});
