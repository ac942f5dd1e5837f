import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { registerLimitCases } from './limit-cases.js';
import { admin, chatWithKey, createKey, FIXED_COST_USD, fixedUsageHandler } from './vault-harness.js';

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(fixedUsageHandler());
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

registerLimitCases(test.serial, () => ({ a: gateway, b: gateway, upstream: fake.baseUrl }), 'embedded SQLite');

test.serial('allowed models, allowed users and expiry are enforced with 403 / 401', async (t) => {
  const { key } = await createKey(t, gateway, {
    name: 'restricted',
    provider: 'openai',
    provider_key: 'sk-restricted-secret-0123456789',
    custom_host: fake.baseUrl,
    limits: { allowed_models: ['gpt-4o-mini'], allowed_users: ['alice'] },
  });
  t.is((await chatWithKey(gateway, key, { user: 'alice' })).status, 200);
  const otherModel = await chatWithKey(gateway, key, { user: 'alice', model: 'gpt-4o' });
  t.is(otherModel.status, 403);
  t.like(otherModel.json.error, { code: 'model_not_allowed', param: 'model' });
  const otherUser = await chatWithKey(gateway, key, { user: 'mallory' });
  t.is(otherUser.status, 403);
  t.like(otherUser.json.error, { code: 'user_not_allowed', param: 'user' });
  t.is((await chatWithKey(gateway, key)).status, 403, 'no user at all is refused too');

  const expiring = await createKey(t, gateway, {
    name: 'expiring',
    provider: 'openai',
    provider_key: 'sk-expiring-secret-0123456789',
    custom_host: fake.baseUrl,
    expires_at: new Date(Date.now() + 400).toISOString(),
  });
  t.is((await chatWithKey(gateway, expiring.key)).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const expired = await chatWithKey(gateway, expiring.key);
  t.is(expired.status, 401);
  t.is(expired.json.error.code, 'virtual_key_expired');
});

test.serial('a model without a price is refused for a key with a budget; cost is logged for priced models', async (t) => {
  const { key } = await createKey(t, gateway, {
    name: 'priced',
    provider: 'openai',
    provider_key: 'sk-priced-secret-0123456789',
    custom_host: fake.baseUrl,
    limits: { budget_usd: 1 },
  });
  const unknown = await chatWithKey(gateway, key, { model: 'my-finetune-xyz' });
  t.is(unknown.status, 403);
  t.is(unknown.json.error.code, 'model_not_priced');
  const trace = `priced-${process.pid}`;
  t.is((await chatWithKey(gateway, key, {}, { 'x-gateway-trace-id': trace })).status, 200);
  const deadline = Date.now() + 3000;
  let entry;
  while (!(entry = gateway.entries().find((candidate) => candidate.traceId === trace)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.is(entry?.costUsd, FIXED_COST_USD);
  t.is(entry?.caller?.startsWith('virtual-key:'), true);
});

test.serial('a streamed request is settled at the stream end with the usage it reported', async (t) => {
  fake.handle((request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (body: object) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', ...body })}\n\n`;
    response.write(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] }));
    setTimeout(() => {
      response.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
      response.write(chunk({ choices: [], usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500, prompt_tokens_details: { cached_tokens: 400 } } }));
      response.end('data: [DONE]\n\n');
    }, 100);
  });
  try {
    const { id, key } = await createKey(t, gateway, {
      name: 'streamed',
      provider: 'openai',
      provider_key: 'sk-stream-secret-0123456789',
      custom_host: fake.baseUrl,
      limits: { budget_usd: 1, budget_period: 'day' },
    });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': key },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 600 }),
    });
    t.is(response.status, 200);
    await response.text();
    const deadline = Date.now() + 3000;
    let usage;
    do {
      usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
    } while (usage.reserved_usd !== 0 && Date.now() < deadline);
    // 600 uncached × 0.15 + 400 cached × 0.075 + 500 × 0.60, per million = 0.00042 USD.
    t.is(Math.round(usage.spend_usd.day * 1e9), 420_000);
    t.is(usage.budget_period, 'day');
    t.is(usage.remaining_usd, 1 - 0.00042);
  } finally {
    fake.handle(fixedUsageHandler());
  }
});

test.serial('a streamed pass-through response is charged from the usage event it carries, bytes unchanged', async (t) => {
  const events = [
    'data: {"id":"c","object":"text_completion","choices":[{"text":"he","index":0}],"model":"gpt-4o-mini"}\n\n',
    'data: {"id":"c","object":"text_completion","choices":[],"model":"gpt-4o-mini","usage":{"prompt_tokens":2000,"completion_tokens":1000,"total_tokens":3000}}\n\n',
    'data: [DONE]\n\n',
  ];
  fake.handle((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of events) response.write(event);
    response.end();
  });
  try {
    const { id, key } = await createKey(t, gateway, {
      name: 'pass-stream',
      provider: 'openai',
      provider_key: 'sk-pass-stream-secret-0123456789',
      custom_host: fake.baseUrl,
      limits: { budget_usd: 1 },
    });
    // /v1/batches is not a unified operation: it passes through, bytes untouched.
    const response = await fetch(`${gateway.url}/v1/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': key },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hi', stream: true }),
    });
    t.is(await response.text(), events.join(''));
    const deadline = Date.now() + 3000;
    let usage;
    do {
      usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
    } while (usage.spend_usd.total === 0 && Date.now() < deadline);
    // 2000 × 0.15 + 1000 × 0.60, per million = 0.0009 USD.
    t.is(Math.round(usage.spend_usd.total * 1e9), 900_000);
  } finally {
    fake.handle(fixedUsageHandler());
  }
});

test.serial('usage in input/output_tokens (the Responses API) is charged; a pass-through answer without usage is charged the pass-through reservation', async (t) => {
  fake.handle((request, response) => {
    if (request.url.startsWith('/v1/responses')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: 'resp_1', object: 'response', created_at: 1, status: 'completed', output: [], model: 'gpt-4o-mini', usage: { input_tokens: 2000, output_tokens: 1000, total_tokens: 3000 } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
  });
  try {
    const { id, key } = await createKey(t, gateway, {
      name: 'pass-responses',
      provider: 'openai',
      provider_key: 'sk-pass-responses-secret-0123456789',
      custom_host: fake.baseUrl,
      limits: { budget_usd: 0.0209 },
    });
    const call = (path: string, body?: unknown) =>
      fetch(`${gateway.url}${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { 'x-gateway-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      }).then(async (response) => ({ status: response.status, text: await response.text() }));
    // Settlement runs when the response closes: poll until the spend reaches what is expected.
    const spendNanos = async (expected: number) => {
      const deadline = Date.now() + 3000;
      let nanos: number;
      do nanos = Math.round((await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json.spend_usd.total * 1e9);
      while (nanos !== expected && Date.now() < deadline);
      return nanos;
    };

    t.is((await call('/v1/responses', { model: 'gpt-4o-mini', input: 'hi' })).status, 200);
    // 2000 × 0.15 + 1000 × 0.60, per million = 0.0009 USD.
    t.is(await spendNanos(900_000), 900_000);
    // No usage in the answer: charged the fixed pass-through reservation, 0.01 USD each.
    t.is((await call('/v1/files')).status, 200);
    t.is(await spendNanos(10_900_000), 10_900_000);
    t.is((await call('/v1/files')).status, 200);
    t.is(await spendNanos(20_900_000), 20_900_000);
    const refused = await call('/v1/files');
    t.is(refused.status, 403);
    t.is(JSON.parse(refused.text).error.code, 'budget_exceeded');
  } finally {
    fake.handle(fixedUsageHandler());
  }
});
