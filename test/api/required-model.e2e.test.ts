import test from 'ava';
import { type Fake, openAIHandler, startFake } from '../fakes/openai-fake.js';
import { gatewayHeaders, startGateway, type TestGateway } from '../harness.js';

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(openAIHandler);
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const bodies: Array<[path: string, body: Record<string, unknown>]> = [
  ['/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] }],
  ['/v1/completions', { prompt: 'hi' }],
  ['/v1/embeddings', { input: 'hi' }],
  ['/v1/audio/speech', { input: 'hi', voice: 'alloy' }],
];

for (const [path, body] of bodies) {
  test(`${path} without a model: 400 "is required", like a missing messages`, async (t) => {
    const before = fake.requests.length;
    const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { ...gatewayHeaders(fake.baseUrl), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    t.is(response.status, 400);
    const { error } = (await response.json()) as { error: Record<string, unknown> };
    t.like(error, { type: 'invalid_request_error', param: 'model', code: 'invalid_value', message: "Invalid 'model': is required." });
    t.is(fake.requests.length, before, 'nothing is sent upstream');
  });
}

test('a chat without messages says the same', async (t) => {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { ...gatewayHeaders(fake.baseUrl), 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o' }) });
  t.like(await response.json(), { error: { param: 'messages', message: "Invalid 'messages': is required." } });
});
