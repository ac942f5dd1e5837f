import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, chatWithKey, createKey, FIXED_COST_USD, fixedUsageHandler } from './vault-harness.js';

/** Issue 31, item 15: money in the admin API without float noise, and reset times exact to the millisecond. */

let fake: Fake;
let gateway: TestGateway;
let usage = { prompt_tokens: 60, completion_tokens: 10, total_tokens: 70 };

test.before(async () => {
  const fixed = fixedUsageHandler(0);
  fake = await startFake((request, response) => {
    if (request.url.startsWith('/v1/chat/completions')) {
      const body = request.json();
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-money',
          object: 'chat.completion',
          created: 1741569952,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, logprobs: null, finish_reason: 'stop' }],
          usage,
        }),
      );
      return;
    }
    return fixed(request, response);
  });
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

async function settled(id: string): Promise<any> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const answer = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
    if ((answer.reserved_usd === 0 && answer.requests.total > 0) || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test.serial('remaining_usd is the budget less the spend without float noise', async (t) => {
  usage = { prompt_tokens: 60, completion_tokens: 10, total_tokens: 70 };
  const { id, key } = await createKey(t, gateway, { name: 'money-remaining', provider: 'openai', provider_key: 'sk-money-secret-0123456789abcdef', custom_host: fake.baseUrl, limits: { budget_usd: 0.0001 } });
  t.is((await chatWithKey(gateway, key)).status, 200);
  t.is((await chatWithKey(gateway, key)).status, 200);
  const answer = await settled(id);
  t.is(answer.spend_usd.total, 2 * FIXED_COST_USD);
  // 0.0001 − 0.00003 in dollar floats is 0.00007000000000000001.
  t.is(answer.remaining_usd, 0.00007);
  t.is(JSON.stringify(answer.remaining_usd), '0.00007');
});

test.serial('a request\'s cost in the logs and the admin API has no float noise', async (t) => {
  // 1 prompt token × $0.15/M + 3 completion tokens × $0.60/M: 0.0000019499999999999995 in floats.
  usage = { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 };
  const trace = `money-${process.pid}`;
  const { key } = await createKey(t, gateway, { name: 'money-cost', provider: 'openai', provider_key: 'sk-money-secret-0123456789abcdef', custom_host: fake.baseUrl });
  t.is((await chatWithKey(gateway, key, {}, { 'x-gateway-trace-id': trace })).status, 200);
  await gateway.waitForEntries(1);
  await gateway.gateway.flushLogs();
  const listed = await admin(gateway, 'GET', `/admin/logs?trace_id=${trace}`);
  t.is(listed.status, 200);
  t.is(listed.json.data.length, 1);
  t.is(listed.json.data[0].cost_usd, 0.00000195);
  t.regex(listed.text, /"cost_usd":0\.00000195[,}]/);
  const detail = await admin(gateway, 'GET', `/admin/logs/${listed.json.data[0].id}`);
  t.regex(detail.text, /"cost_usd":0\.00000195[,}]/);
});

test.serial('day_resets_at is the next UTC midnight exactly, however the clock moves while the usage is read', async (t) => {
  const { id } = await createKey(t, gateway, { name: 'money-reset', provider: 'openai', provider_key: 'sk-money-secret-0123456789abcdef', custom_host: fake.baseUrl, limits: { budget_usd: 1, budget_period: 'day' } });
  // A clock that moves a millisecond at every reading, from noon: any two readings differ.
  const realNow = Date.now;
  let now = Date.UTC(2031, 4, 14, 12, 0, 0, 0);
  Date.now = () => (now += 1);
  let answer;
  try {
    answer = await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`);
  } finally {
    Date.now = realNow;
  }
  t.is(answer.status, 200);
  t.is(answer.json.day_resets_at, '2031-05-15T00:00:00.000Z');
  t.is(answer.json.budget_resets_at, '2031-05-15T00:00:00.000Z');
});
