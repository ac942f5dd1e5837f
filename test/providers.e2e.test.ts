import test from 'ava';
import config from '../gateway.config.js';
import { providerBanner } from '../core/registry.js';
import { ACCOUNT_KEY, startGateway, type TestGateway } from './harness.js';

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: config.providers });
});
test.after.always(async () => {
  await gateway?.close();
});

test('GET /admin/plugins lists every shipped provider with the operations it supports', async (t) => {
  const response = await fetch(`${gateway.url}/admin/plugins`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } });
  t.is(response.status, 200);
  const listing = (await response.json()) as { providers: Array<{ id: string; name: string; operations: string[] }> };
  t.true(listing.providers.length >= 25, `${listing.providers.length} providers`);
  const byId = new Map(listing.providers.map((provider) => [provider.id, provider]));
  t.deepEqual(byId.get('groq')?.operations, ['chat']);
  t.deepEqual(byId.get('mistral')?.operations, ['chat', 'embed']);
  t.deepEqual(byId.get('voyage')?.operations, ['embed', 'rerank']);
  t.deepEqual(byId.get('cohere')?.operations, ['chat', 'embed', 'rerank']);
  t.deepEqual(
    [...(byId.get('openai')?.operations ?? [])].sort(),
    ['chat', 'completion', 'embed', 'imageEdit', 'imageGenerate', 'imageVariation', 'models', 'realtime', 'responses', 'speech', 'transcription', 'translation'],
  );
  t.is(byId.get('nvidia-nim')?.name, 'NVIDIA NIM');
  for (const provider of listing.providers) t.true(provider.operations.length > 0, provider.id);
});

test('the start-up banner lists each provider on its own line with its operations', (t) => {
  const banner = providerBanner(gateway.gateway.registry.list().providers);
  t.regex(banner, /^providers: \d+\n/);
  t.regex(banner, /^ {2}groq +chat$/m);
  t.regex(banner, /^ {2}jina +embed, rerank$/m);
  t.regex(banner, /^ {2}ollama +chat, embed$/m);
});

const chatWith = (provider: string) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': provider },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
  });

test('an unknown provider is 400 naming the close matches, typos included', async (t) => {
  for (const [typed, expected] of [
    ['grok', 'groq'],
    ['mistal', 'mistral'],
    ['llama.cpp', 'llamacpp'],
    ['deep-seek', 'deepseek'],
    ['nvidia', 'nvidia-nim'],
  ] as const) {
    const response = await chatWith(typed);
    t.is(response.status, 400, typed);
    const body = (await response.json()) as { error: { message: string; param: string; code: string } };
    t.like(body.error, { param: 'x-gateway-provider', code: 'unknown_provider' });
    const suggested = /Did you mean ([^?]+)\?/.exec(body.error.message)?.[1].split(', ') ?? [];
    t.true(suggested.includes(expected), `${typed}: ${body.error.message}`);
  }
  const far = (await (await chatWith('zzzzzzzz')).json()) as { error: { message: string } };
  t.notRegex(far.error.message, /Did you mean/);
});

test('an embeddings-only provider refuses chat with a 400 naming provider and operation', async (t) => {
  const response = await chatWith('voyage');
  t.is(response.status, 400);
  const body = (await response.json()) as { error: { message: string; code: string } };
  t.is(body.error.code, 'unsupported_operation');
  t.regex(body.error.message, /"voyage" does not support the operation "chat"/);
});
