import test from 'ava';
import OpenAI from 'openai';
import { type Fake, openAIFixture, openAIHandler, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { chatWithKey, createKey } from './vault-harness.js';

/** Issue 31, item 11: `GET /v1/models` with a key limited to some models lists exactly those. */

let fake: Fake;
let gateway: TestGateway;
const fixture = JSON.parse(openAIFixture('models.json'));

test.before(async () => {
  fake = await startFake(openAIHandler);
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const client = (key: string) => new OpenAI({ apiKey: 'unused', baseURL: `${gateway.url}/v1`, defaultHeaders: { 'x-gateway-api-key': key }, maxRetries: 0 });

async function listModels(key: string) {
  const ids = [];
  for await (const model of client(key).models.list()) ids.push(model);
  return ids;
}

test.serial('a key with allowed_models lists exactly its models, in its order: catalogue entries, and a minimal one for a model the catalogue does not know', async (t) => {
  const { key } = await createKey(t, gateway, {
    name: 'models-restricted',
    provider: 'openai',
    provider_key: 'sk-models-secret-0123456789abcdef',
    custom_host: fake.baseUrl,
    limits: { allowed_models: ['tts-1', 'gpt-4o-mini', 'my-finetune'] },
  });
  const models = await listModels(key);
  t.deepEqual(
    models.map((model) => [model.id, model.owned_by]),
    [
      ['tts-1', 'openai'],
      ['gpt-4o-mini', 'openai'],
      ['my-finetune', 'openai'],
    ],
  );
  t.like(models[1], { context_window: 128000, capabilities: { tools: true, vision: true } });
  t.deepEqual(models[2], { id: 'my-finetune', object: 'model', created: 0, owned_by: 'openai', kind: 'model' } as unknown as typeof models[2]);
  // The list is the gateway's catalogue: the provider was not asked.
  t.false(fake.requests.some((request) => request.url.startsWith('/v1/models')));
  // Using a model is still checked as before.
  t.is((await chatWithKey(gateway, key, { model: 'gpt-4o' })).status, 403);
});

test.serial("a key limited to certain users may list models too; with x-gateway-provider a key sees the provider's own list", async (t) => {
  const users = await createKey(t, gateway, {
    name: 'models-users',
    provider: 'openai',
    provider_key: 'sk-models-secret-0123456789abcdef',
    custom_host: fake.baseUrl,
    limits: { allowed_users: ['alice'] },
  });
  const catalogued = await listModels(users.key);
  t.true(catalogued.length > 0 && catalogued.every((model) => model.owned_by === 'openai'));
  const open = await createKey(t, gateway, { name: 'models-open', provider: 'openai', provider_key: 'sk-models-secret-0123456789abcdef', custom_host: fake.baseUrl });
  const live = [];
  const client = new OpenAI({ apiKey: 'unused', baseURL: `${gateway.url}/v1`, defaultHeaders: { 'x-gateway-api-key': open.key, 'x-gateway-provider': 'openai' }, maxRetries: 0 });
  for await (const model of client.models.list()) live.push(model);
  t.deepEqual(live, fixture.data);
});
