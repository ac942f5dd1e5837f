import test from 'ava';
import { openAIFixture, openAIHandler } from '../fakes/openai-fake.js';
import { loggedOnce } from '../harness.js';
import { type ApiSetup, startApi } from './api-setup.js';

let api: ApiSetup;
const fixture = JSON.parse(openAIFixture('image.json'));

test.before(async () => {
  api = await startApi((request, response) => {
    if (request.headers['x-scenario'] === 'extras') {
      const body = { ...fixture, data: [{ ...fixture.data[0], content_filter: 'none' }], provider_extra: true };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    return openAIHandler(request, response);
  });
});

test.after.always(async () => {
  await api?.close();
});

test('image model B with every option: sent as given, answered with url and revised prompt, counted in the log', async (t) => {
  const { client, trace } = api.client('img-b');
  const params = { model: 'dall-e-3', prompt: 'A cute baby sea otter', n: 1, quality: 'hd' as const, response_format: 'url' as const, size: '1792x1024' as const, style: 'natural' as const, user: 'u-3' };
  const result = await client.images.generate(params);
  t.deepEqual(api.received(trace).json(), params);
  t.is(api.received(trace).url, '/v1/images/generations');
  t.deepEqual(result, { created: fixture.created, data: [{ url: fixture.data[0].url, revised_prompt: fixture.data[0].revised_prompt }] });
  const entry = await loggedOnce(api.gateway, trace);
  t.like(entry, { operation: 'imageGenerate', status: 200, outcome: 'ok', model: 'dall-e-3' });
  t.deepEqual(entry.units, { requests: 1, images: 1 });
});

test('without a model the request is image model A: n up to 10 and b64_json', async (t) => {
  const { client, trace } = api.client('img-a');
  const result = await client.images.generate({ prompt: 'p'.repeat(1000), n: 10, size: '256x256', response_format: 'b64_json' });
  t.is(result.data?.length, 10);
  t.is(result.data?.[0].b64_json, Buffer.from('fake-png-bytes').toString('base64'));
  t.is(api.received(trace).json().model, undefined, 'the request went up as sent');
  const entry = await loggedOnce(api.gateway, trace);
  t.like(entry, { model: 'dall-e-2' });
  t.deepEqual(entry.units, { requests: 1, images: 10 });
});

test('a 4000-character prompt is accepted for image model B', async (t) => {
  const { client, trace } = api.client('img-b-4000');
  await client.images.generate({ model: 'dall-e-3', prompt: 'q'.repeat(4000) });
  t.is(api.received(trace).json().prompt.length, 4000);
});

test("another image model gets the generic checks and the provider's own (OpenAI's GPT image sizes)", async (t) => {
  const { client, trace } = api.client('img-gpt');
  await client.images.generate({ model: 'gpt-image-1', prompt: 'x'.repeat(5000), size: '1536x1024', quality: 'high', n: 3 });
  t.is(api.received(trace).json().size, '1536x1024');
});

test('strict compliance strips fields outside the image schema; false keeps them', async (t) => {
  const strict = await api.client('img-strict', { 'x-scenario': 'extras' }).client.images.generate({ prompt: 'x' });
  t.deepEqual(strict, fixture);
  const loose = await api.client('img-loose', { 'x-scenario': 'extras', 'x-gateway-strict-api-compliance': 'false' }).client.images.generate({ prompt: 'x' });
  t.is((loose as any).provider_extra, true);
  t.is((loose.data![0] as any).content_filter, 'none');
});
