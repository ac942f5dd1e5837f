import test from 'ava';
import { openAIFixture, openAIHandler } from '../fakes/openai-fake.js';
import { loggedOnce } from '../harness.js';
import { type ApiSetup, startApi } from './api-setup.js';

let api: ApiSetup;
const fixture = JSON.parse(openAIFixture('models.json'));

test.before(async () => {
  api = await startApi((request, response) => {
    if (request.headers['x-scenario'] === 'extras') {
      const body = { ...fixture, data: fixture.data.map((model: object) => ({ ...model, permission: [], root: 'x' })), extra: 1 };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    if (request.headers['x-scenario'] === 'wrong-shape') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'chat.completion', choices: [] }));
      return;
    }
    return openAIHandler(request, response);
  });
});

test.after.always(async () => {
  await api?.close();
});

test("models: the provider's list in the OpenAI list shape, logged as the models operation", async (t) => {
  const { client, trace } = api.client('models');
  const ids = [];
  for await (const model of client.models.list()) ids.push(model);
  t.deepEqual(ids, fixture.data);
  const received = api.received(trace);
  t.is(received.method, 'GET');
  t.is(received.url, '/v1/models');
  t.is(received.body.length, 0);
  const entry = await loggedOnce(api.gateway, trace);
  t.like(entry, { operation: 'models', method: 'GET', status: 200, outcome: 'ok' });
});

test('strict compliance strips fields outside the model list schema; false keeps them', async (t) => {
  const strict = [];
  for await (const model of api.client('models-strict', { 'x-scenario': 'extras' }).client.models.list()) strict.push(model);
  t.deepEqual(strict, fixture.data);
  const loose = await api.client('models-loose', { 'x-scenario': 'extras', 'x-gateway-strict-api-compliance': 'false' }).client.models.list();
  t.is((loose.data[0] as any).root, 'x');
});

test('a single model (/v1/models/{id}) still passes through', async (t) => {
  const { client, trace } = api.client('model-one');
  await t.throwsAsync(client.models.retrieve('gpt-4o-mini'), { message: /Unknown request URL/ });
  t.is(api.received(trace).url, '/v1/models/gpt-4o-mini');
  const entry = await loggedOnce(api.gateway, trace);
  t.like(entry, { operation: 'passthrough', status: 404 });
});

test("an answer of the wrong shape is the provider's fault: 502 upstream_invalid_response, not 500", async (t) => {
  const { client, trace } = api.client('models-wrong', { 'x-scenario': 'wrong-shape' });
  const error = await t.throwsAsync(client.models.list());
  t.is((error as { status?: number }).status, 502);
  t.is((error as { code?: string }).code, 'upstream_invalid_response');
  const entry = await loggedOnce(api.gateway, trace);
  t.like(entry, { operation: 'models', status: 502 });
});
