import test from 'ava';
import OpenAI from 'openai';
import { type Fake, openAIFixture, openAIHandler, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { chatWithKey, createKey } from './vault-harness.js';

/** Issue 31, item 11: `GET /v1/models` with a key limited to some models lists exactly those. */

let fake: Fake;
let gateway: TestGateway;
const fixture = JSON.parse(openAIFixture('models.json'));
const listed = (id: string) => fixture.data.find((model: { id: string }) => model.id === id);

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

test.serial('a key with allowed_models lists exactly its models: the provider\'s entries, and a minimal one for a model the provider does not list', async (t) => {
  const { key } = await createKey(t, gateway, {
    name: 'models-restricted',
    provider: 'openai',
    provider_key: 'sk-models-secret-0123456789abcdef',
    custom_host: fake.baseUrl,
    limits: { allowed_models: ['tts-1', 'gpt-4o-mini', 'my-finetune'] },
  });
  t.deepEqual(await listModels(key), [listed('tts-1'), listed('gpt-4o-mini'), { id: 'my-finetune', object: 'model', created: 0, owned_by: 'openai' }]);
  // Using a model is still checked as before.
  t.is((await chatWithKey(gateway, key, { model: 'gpt-4o' })).status, 403);
});

test.serial('a key limited to certain users may list models too; a key without limits sees the provider\'s whole list', async (t) => {
  const users = await createKey(t, gateway, {
    name: 'models-users',
    provider: 'openai',
    provider_key: 'sk-models-secret-0123456789abcdef',
    custom_host: fake.baseUrl,
    limits: { allowed_users: ['alice'] },
  });
  t.deepEqual(await listModels(users.key), fixture.data);
  const open = await createKey(t, gateway, { name: 'models-open', provider: 'openai', provider_key: 'sk-models-secret-0123456789abcdef', custom_host: fake.baseUrl });
  t.deepEqual(await listModels(open.key), fixture.data);
});
