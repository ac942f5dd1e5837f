import test from 'ava';
import { azureOpenAI } from '../../plugins/providers/azure-openai/index.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { together } from '../../plugins/providers/together/index.js';
import { CATALOGUE_VERSION } from '../../core/vault/pricing.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, chatWithKey, createKey, FIXED_COST_USD, fixedUsageHandler } from './vault-harness.js';

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(fixedUsageHandler(0));
  gateway = await startGateway({ providers: [openai(), azureOpenAI(), together()], pricing: { models: { openai: { 'my-finetune': { input: 1, output: 2 } } } } });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

let sequence = 0;
const budgetedKey = (t: Parameters<typeof createKey>[0], limits: Record<string, unknown>) =>
  createKey(t, gateway, { name: `prices-${++sequence}`, provider: 'openai', provider_key: 'sk-prices-secret-0123456789abcdef', custom_host: fake.baseUrl, limits });

/** Waits until the key's reservations are settled (settlement runs when each response closes). */
async function settled(id: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while ((await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json.reserved_usd !== 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test.serial('GET /v1/models on a key with a budget is answered, not refused for want of a price', async (t) => {
  const { key } = await budgetedKey(t, { budget_usd: 1 });
  const response = await fetch(`${gateway.url}/v1/models`, { headers: { 'x-gateway-api-key': key } });
  t.is(response.status, 200, await response.clone().text());
  t.like(await response.json(), { object: 'list' });
});

test.serial('a budgeted key on a compatible provider is priced from the catalogue by its upstream model name, and charged', async (t) => {
  const { id, key } = await createKey(t, gateway, {
    name: `prices-together-${++sequence}`,
    provider: 'together',
    provider_key: 'tg-prices-secret-0123456789abcdef',
    custom_host: fake.baseUrl,
    limits: { budget_usd: 1, budget_period: 'month' },
  });
  const answered = await chatWithKey(gateway, key, { model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo' });
  t.is(answered.status, 200, JSON.stringify(answered.json));
  await settled(id);
  const usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
  // The fake reports 60 prompt and 10 completion tokens: 70 × $0.88 per million = $0.0000616.
  t.is(Math.round(usage.spend_usd.total * 1e9), 61_600);
});

test.serial('a brand-new key whose budget is below one request\'s estimate: budget_exceeded says so, with the estimate and max_tokens', async (t) => {
  const { key } = await budgetedKey(t, { budget_usd: 0.00001, budget_period: 'month' });
  const bounded = await chatWithKey(gateway, key, { max_tokens: 1000 });
  t.is(bounded.status, 403);
  const { error } = bounded.json;
  t.is(error.code, 'budget_exceeded');
  t.regex(error.message, /This request alone is estimated at up to \$0\.000609, more than the key's whole budget/);
  t.regex(error.message, /Lower max_tokens \(the estimate reserves 1000 output tokens\)/);
  t.regex(error.message, /Budget \$0\.00001 per month: \$0 spent, \$0 reserved by requests in flight, \$0\.00001 left; resets at \d{4}-\d{2}-01T00:00:00\.000Z\./);
  const now = new Date();
  t.regex(error.budget.level_id, /^vk_/, 'the refusal names the key as the level that refused');
  t.deepEqual(error.budget, {
    level: 'key',
    level_id: error.budget.level_id,
    limit: 'budget_usd',
    spent_usd: 0,
    reserved_usd: 0,
    budget_usd: 0.00001,
    period: 'month',
    resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
    // 60 prompt tokens (the bound of FIXED_MESSAGES) × $0.15/M + 1000 output tokens × $0.60/M = $0.000609
    request_estimate_usd: 0.000609,
  });

  const unbounded = await chatWithKey(gateway, key, { max_tokens: undefined });
  t.is(unbounded.status, 403);
  t.regex(unbounded.json.error.message, /sets no max_tokens, so 1024 output tokens are assumed: set a lower max_tokens/);
});

test.serial('a spent daily budget: budget_exceeded gives spent, reserved, budget, period and the next UTC midnight', async (t) => {
  const { id, key } = await budgetedKey(t, { budget_usd: 2 * FIXED_COST_USD, budget_period: 'day' });
  t.is((await chatWithKey(gateway, key)).status, 200);
  t.is((await chatWithKey(gateway, key)).status, 200);
  await settled(id);
  const refused = await chatWithKey(gateway, key);
  t.is(refused.status, 403);
  const now = new Date();
  const midnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
  t.like(refused.json.error, {
    code: 'budget_exceeded',
    type: 'permission_error',
    budget: { spent_usd: 2 * FIXED_COST_USD, reserved_usd: 0, budget_usd: 2 * FIXED_COST_USD, period: 'day', resets_at: midnight, request_estimate_usd: FIXED_COST_USD },
  });
  t.is(refused.json.error.message, `This key's budget is exceeded. Budget $0.00003 per day: $0.00003 spent, $0 reserved by requests in flight, $0 left; resets at ${midnight}. This request is estimated at up to $0.000015, more than is left.`);
});

test.serial('a total budget has no reset', async (t) => {
  const { key } = await budgetedKey(t, { budget_usd: 0.00001 });
  const refused = await chatWithKey(gateway, key, { max_tokens: 1000 });
  t.like(refused.json.error, { code: 'budget_exceeded', budget: { period: 'total', resets_at: null } });
  t.regex(refused.json.error.message, /Budget \$0\.00001 in total: /);
});

test.serial('GET /admin/prices shows the price used and where it came from', async (t) => {
  const catalogued = await admin(gateway, 'GET', '/admin/prices?provider=openai&model=gpt-4o-mini-2024-07-18');
  t.is(catalogued.status, 200);
  t.deepEqual(catalogued.json, {
    provider: 'openai',
    model: 'gpt-4o-mini-2024-07-18',
    registered: true,
    source: `catalogue@${CATALOGUE_VERSION}`,
    catalogue: { version: CATALOGUE_VERSION, provider: 'openai', model: 'gpt-4o-mini' },
    unit: 'USD',
    price: {
      input_per_million: 0.15,
      output_per_million: 0.6,
      cached_input_per_million: 0.075,
      input_per_token: 0.15 / 1_000_000,
      output_per_token: 0.6 / 1_000_000,
      cached_input_per_token: 0.075 / 1_000_000,
    },
  });

  const configured = await admin(gateway, 'GET', '/admin/prices?provider=openai&model=my-finetune');
  t.like(configured.json, { source: 'config', price: { input_per_million: 1, output_per_million: 2, cached_input_per_million: null } });

  const azure = await fetch(`${gateway.url}/admin/prices?provider=azure-openai&model=prod-chat`, {
    headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-cloud-a-model-name': 'gpt-4o' },
  }).then(async (response) => ({ status: response.status, json: (await response.json()) as any }));
  t.like(azure, { status: 200, json: { source: `catalogue@${CATALOGUE_VERSION}`, catalogue: { provider: 'azure', model: 'gpt-4o' }, price: { input_per_million: 2.5 } } });

  const unknown = await admin(gateway, 'GET', '/admin/prices?provider=openai&model=no-such-model');
  t.like(unknown.json, { source: 'none', price: null });

  const missing = await admin(gateway, 'GET', '/admin/prices?provider=openai');
  t.is(missing.status, 400);
  t.like(missing.json.error, { param: 'model', code: 'invalid_query' });
});

test.serial('GET /admin/prices takes the account key only', async (t) => {
  const { key } = await budgetedKey(t, {});
  t.is((await admin(gateway, 'GET', '/admin/prices?provider=openai&model=gpt-4o', undefined, key)).status, 403);
  t.is((await admin(gateway, 'GET', '/admin/prices?provider=openai&model=gpt-4o', undefined, 'wrong')).status, 401);
});
