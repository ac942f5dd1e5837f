import test from 'ava';
import { startGateway, ACCOUNT_KEY } from '../../../test/harness.js';
import { type Fake, startFake } from '../../../test/fakes/openai-fake.js';
import { FAKE_PROJECT } from './watsonx-fake.js';
import { IAM_APIKEY_GRANT, isAccessToken } from './watsonx-iam.js';
import { watsonx } from './index.js';

// The API key exchange through the gateway: a loopback IAM token endpoint that counts exchanges,
// and a loopback watsonx.ai that takes only the tokens IAM issued and has not revoked.

const API_KEY = 'ibm-cloud-api-key-0123456789abcdefghijklmnopqrstuv';

interface Setup {
  readonly iam: Fake;
  readonly watsonx: Fake;
  /** Tokens watsonx.ai takes. */
  readonly valid: Set<string>;
  /** The gateway's clock, moved by the test. */
  readonly clock: { now: () => number; advance(ms: number): void };
  /** How IAM answers next: its status (200 issues a token). */
  iamStatus: number;
  /** How long IAM's tokens last, in seconds. */
  lifetime: number;
  chat(credential?: string, headers?: Record<string, string>): Promise<Response>;
  /** The gateway's log, for secret scans. */
  rawLog(): string;
  close(): Promise<void>;
}

async function setup(): Promise<Setup> {
  let time = Date.now();
  const clock = { now: () => time, advance: (ms: number) => void (time += ms) };
  const valid = new Set<string>();
  let issued = 0;
  const state = { iamStatus: 200, lifetime: 3600 };
  const iam = await startFake(async (request, response) => {
    if (state.iamStatus !== 200) {
      response.writeHead(state.iamStatus, { 'content-type': 'application/json' }).end(JSON.stringify({ errorCode: 'BXNIM0415E', errorMessage: 'Provided API key could not be found.', context: { requestId: 'fake' } }));
      return;
    }
    // Answer after a pause, so that concurrent first requests overlap the exchange.
    await new Promise((resolve) => setTimeout(resolve, 50));
    issued += 1;
    const token = `eyJhbGciOiJSUzI1NiJ9.eyJpc3N1ZWQiOiR7aXNzdWVkfSJ9.token-${issued}`;
    valid.add(token);
    const now = Math.floor(clock.now() / 1000);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, refresh_token: 'not_supported', token_type: 'Bearer', expires_in: state.lifetime, expiration: now + state.lifetime, scope: 'ibm openid' }));
  });
  const upstream = await startFake((request, response) => {
    const token = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!valid.has(token)) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ code: 'authentication_token_expired', message: 'Failed to authenticate the request due to an expired token' }], trace: 'fake', status_code: 401 }));
      return;
    }
    const body = request.json();
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ id: 'chat-fake', model_id: body.model_id, created: 1_749_736_055, choices: [{ index: 0, message: { role: 'assistant', content: 'Ciao' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }),
    );
  });
  const gateway = await startGateway({ providers: [watsonx({ iamUrl: `${iam.origin}/identity/token`, projectId: FAKE_PROJECT })] }, {}, { clock });
  const result: Setup = {
    iam,
    watsonx: upstream,
    valid,
    clock,
    get iamStatus() {
      return state.iamStatus;
    },
    set iamStatus(value) {
      state.iamStatus = value;
    },
    get lifetime() {
      return state.lifetime;
    },
    set lifetime(value) {
      state.lifetime = value;
    },
    chat: (credential = API_KEY, headers = { 'x-gateway-provider': 'watsonx', 'x-gateway-custom-host': upstream.origin }) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, authorization: `Bearer ${credential}`, ...headers },
        body: JSON.stringify({ model: 'ibm/granite-3-3-8b-instruct', messages: [{ role: 'user', content: 'Translate "Hello" in Italian' }] }),
      }),
    rawLog: gateway.rawLog,
    async close() {
      await gateway.close();
      await iam.close();
      await upstream.close();
    },
  };
  return result;
}

const bearer = (fake: Fake, index: number) => String(fake.requests[index].headers.authorization);

test('an API key is exchanged once at IAM for 20 concurrent requests, form-encoded with the API key grant', async (t) => {
  const s = await setup();
  t.teardown(() => s.close());
  const answers = await Promise.all(Array.from({ length: 20 }, () => s.chat()));
  t.deepEqual(
    answers.map((answer) => answer.status),
    Array.from({ length: 20 }, () => 200),
  );
  t.is(s.iam.requests.length, 1);
  const exchange = s.iam.requests[0];
  t.is(exchange.method, 'POST');
  t.is(exchange.url, '/identity/token');
  t.is(exchange.headers['content-type'], 'application/x-www-form-urlencoded');
  t.deepEqual(Object.fromEntries(new URLSearchParams(exchange.body.toString('utf8'))), { grant_type: IAM_APIKEY_GRANT, apikey: API_KEY });
  t.is(s.watsonx.requests.length, 20);
  t.true(s.watsonx.requests.every((request) => request.headers.authorization === `Bearer ${[...s.valid][0]}`));
  t.false(s.rawLog().includes(API_KEY));
});

test('the token is asked for again shortly before it expires, not before', async (t) => {
  const s = await setup();
  t.teardown(() => s.close());
  t.is((await s.chat()).status, 200);
  s.clock.advance(3600_000 - 120_000); // two minutes left: still used
  t.is((await s.chat()).status, 200);
  t.is(s.iam.requests.length, 1);
  s.clock.advance(90_000); // thirty seconds left: renewed
  t.is((await s.chat()).status, 200);
  t.is(s.iam.requests.length, 2);
  t.not(bearer(s.watsonx, 2), bearer(s.watsonx, 0));
  t.is(bearer(s.watsonx, 2), `Bearer ${[...s.valid][1]}`);
});

test('a token the provider refuses (401) is exchanged again and the request retried once', async (t) => {
  const s = await setup();
  t.teardown(() => s.close());
  t.is((await s.chat()).status, 200);
  s.valid.clear(); // revoked upstream
  const answer = await s.chat();
  t.is(answer.status, 200);
  t.is(((await answer.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content, 'Ciao');
  t.is(s.iam.requests.length, 2);
  t.is(s.watsonx.requests.length, 3);
  t.is(s.watsonx.requests[1].headers.authorization, bearer(s.watsonx, 0));
  t.not(bearer(s.watsonx, 2), bearer(s.watsonx, 0));
  // Still refused after the new token: the 401 is the answer (one retry, no loop).
  s.valid.clear();
  s.iam.handle((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'never-valid', expires_in: 3600 }));
  });
  t.is((await s.chat()).status, 401);
  t.is(s.iam.requests.length, 3);
});

test('a refused exchange is a 401 and a failed one a 502, neither naming the API key; a ready token is not exchanged', async (t) => {
  const s = await setup();
  t.teardown(() => s.close());
  s.iamStatus = 400;
  const refused = await s.chat();
  t.is(refused.status, 401);
  const refusedBody = (await refused.json()) as { error: { code: string; message: string } };
  t.is(refusedBody.error.code, 'credential_exchange_refused');
  t.false(JSON.stringify(refusedBody).includes(API_KEY));
  s.iamStatus = 500;
  const failed = await s.chat();
  t.is(failed.status, 502);
  const failedBody = (await failed.json()) as { error: { code: string; message: string } };
  t.is(failedBody.error.code, 'credential_exchange_failed');
  t.false(JSON.stringify(failedBody).includes(API_KEY));
  t.is(s.watsonx.requests.length, 0);
  // A failure is not kept: the next request exchanges again.
  s.iamStatus = 200;
  t.is((await s.chat()).status, 200);
  const before = s.iam.requests.length;
  const token = 'eyJhbGciOiJSUzI1NiJ9.eyJyZWFkeSI6dHJ1ZX0.ready-token';
  s.valid.add(token);
  t.true(isAccessToken(token));
  t.is((await s.chat(token)).status, 200);
  t.is(s.iam.requests.length, before);
  t.is(s.watsonx.requests.at(-1)!.headers.authorization, `Bearer ${token}`);
  t.false(s.rawLog().includes(API_KEY));
});

test('a routed attempt exchanges the same way: one exchange for concurrent requests, renewed after a 401', async (t) => {
  const s = await setup();
  t.teardown(() => s.close());
  const route = JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ name: 'ibm', provider: 'watsonx', custom_host: s.watsonx.origin }] });
  const routed = { 'x-gateway-config': route };
  const answers = await Promise.all(Array.from({ length: 5 }, () => s.chat(API_KEY, routed)));
  t.deepEqual(
    answers.map((answer) => answer.status),
    [200, 200, 200, 200, 200],
  );
  t.is(s.iam.requests.length, 1);
  s.valid.clear();
  const renewed = await s.chat(API_KEY, routed);
  t.is(renewed.status, 200);
  t.is(renewed.headers.get('x-gateway-route-target'), 'ibm');
  // The renewal is part of the one attempt.
  t.is(renewed.headers.get('x-gateway-attempts'), '1');
  t.is(s.iam.requests.length, 2);
  t.is(s.watsonx.requests.length, 7);
  t.not(bearer(s.watsonx, 6), bearer(s.watsonx, 5));
});
