import test from 'ava';
import OpenAI from 'openai';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { openai } from '../../plugins/providers/openai/index.js';
import { groq } from '../../plugins/providers/groq/index.js';
import { together } from '../../plugins/providers/together/index.js';
import { CATALOGUE_VERSION } from '../../core/vault/pricing.js';

let gateway: TestGateway;

test.before(async () => {
  gateway = await startGateway({
    providers: [openai(), groq(), together()],
    models: { fast: { strategy: { mode: 'fallback' }, targets: [{ provider: 'groq', override_params: { model: 'llama-3.1-8b-instant' } }, { provider: 'openai' }] } },
    routes: {
      support: { strategy: { mode: 'single' }, targets: [{ provider: 'openai' }] },
      internal: { strategy: { mode: 'single' }, targets: [{ provider: 'together' }] },
    },
  });
});

test.after.always(async () => {
  await gateway?.close();
});

/** The official SDK with only a gateway key: no provider header, so the gateway answers from its catalogue. */
async function list(key: string): Promise<Array<Record<string, any>>> {
  const client = new OpenAI({ apiKey: 'unused', baseURL: `${gateway.url}/v1`, defaultHeaders: { 'x-gateway-api-key': key }, maxRetries: 0 });
  const entries = [];
  for await (const model of client.models.list()) entries.push(model as unknown as Record<string, any>);
  return entries;
}

test('the account key sees every registered provider\'s catalogue models with context window, capabilities and price, and every alias and route by name', async (t) => {
  const entries = await list(ACCOUNT_KEY);
  const byId = new Map(entries.map((entry) => [`${entry.owned_by}/${entry.id}`, entry]));
  const gpt4o = byId.get('openai/gpt-4o');
  t.like(gpt4o, { object: 'model', owned_by: 'openai', kind: 'model', context_window: 128000, capabilities: { tools: true, vision: true, audio: false, reasoning: false } });
  t.like(gpt4o?.pricing, { input_per_million: 2.5, output_per_million: 10, source: `catalogue@${CATALOGUE_VERSION}` });
  t.true(gpt4o!.created > 0, 'created from the release date');
  t.like(byId.get('groq/llama-3.1-8b-instant'), { owned_by: 'groq', context_window: 131072, capabilities: { tools: true, reasoning: false } });
  t.true(entries.some((entry) => entry.owned_by === 'together'), 'together is listed under its catalogue id (togetherai)');
  t.like(entries.find((entry) => entry.id === 'fast'), { kind: 'alias', owned_by: 'groq', providers: ['groq', 'openai'] });
  t.like(entries.find((entry) => entry.id === 'support'), { kind: 'route', owned_by: 'openai', providers: ['openai'] });
  t.like(entries.find((entry) => entry.id === 'internal'), { kind: 'route', owned_by: 'together' });
});

test.serial('a virtual key sees only its provider\'s models, its allowed models exactly, and only the routes granted to it', async (t) => {
  const bound = await createKey(t, gateway, { name: 'catalogue-bound', provider: 'openai', provider_key: 'sk-catalogue-secret-0123456789abcdef' });
  const entries = await list(bound.key);
  t.true(entries.length > 0);
  t.true(
    entries.filter((entry) => entry.kind === 'model').every((entry) => entry.owned_by === 'openai'),
    'no other provider\'s models',
  );
  t.truthy(entries.find((entry) => entry.id === 'fast'), 'aliases are chosen by model: listed');
  t.false(entries.some((entry) => entry.kind === 'route'), 'no route granted, none listed');

  const limited = await createKey(t, gateway, {
    name: 'catalogue-limited',
    provider: 'openai',
    provider_key: 'sk-catalogue-secret-0123456789abcdef',
    limits: { allowed_models: ['gpt-4o', 'fast', 'my-finetune'] },
    allowed_routes: ['support'],
  });
  const limitedEntries = await list(limited.key);
  t.deepEqual(
    limitedEntries.map((entry) => [entry.id, entry.kind]),
    [
      ['gpt-4o', 'model'],
      ['fast', 'alias'],
      ['my-finetune', 'model'],
      ['support', 'route'],
    ],
  );
  t.is(limitedEntries[0].context_window, 128000);
  t.deepEqual(limitedEntries[2], { id: 'my-finetune', object: 'model', created: 0, owned_by: 'openai', kind: 'model' });
  t.false(JSON.stringify(limitedEntries).includes('sk-catalogue-secret'), 'no secret in the list');
});

test('GET /admin/models/catalogue shows the whole catalogue, provider by provider, with its sources and versions; a virtual key is refused', async (t) => {
  const answer = await admin(gateway, 'GET', '/admin/models/catalogue');
  t.is(answer.status, 200);
  t.regex(answer.json.source.models, /^@tokenlens\/models@1\.3\.0 \(models\.dev\)$/);
  t.is(answer.json.source.prices, `catalogue@${CATALOGUE_VERSION}`);
  t.deepEqual(
    answer.json.providers.map((provider: { id: string; catalogue_provider: string }) => [provider.id, provider.catalogue_provider]),
    [
      ['openai', 'openai'],
      ['groq', 'groq'],
      ['together', 'togetherai'],
    ],
  );
  t.true(answer.json.providers[2].models.length > 0);
  const key = await createKey(t, gateway, { name: 'catalogue-admin', provider: 'openai', provider_key: 'sk-catalogue-secret-0123456789abcdef' });
  t.is((await admin(gateway, 'GET', '/admin/models/catalogue', undefined, key.key)).status, 403);
});

test('without a key the list is refused (401), as every /v1 request', async (t) => {
  const response = await fetch(`${gateway.url}/v1/models`);
  t.is(response.status, 401);
  t.is(((await response.json()) as { error: { code: string } }).error.code, 'missing_api_key');
});
