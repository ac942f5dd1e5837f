import test from 'ava';
import { startRenderedFake } from '../../../test/fakes/rendered-fake.js';
import { PROVIDER_KEY, sdkClient, startGateway } from '../../../test/harness.js';
import { geminiFakeRenderer } from './gemini-fake.js';
import { gemini } from './index.js';

// Needs the core's POST /v1/embeddings route (added in parallel by the unified-API work).
test('embeddings through the gateway: batchEmbedContents receives every input, the SDK gets the vectors', async (t) => {
  const gateway = await startGateway({ providers: [gemini()] });
  const fake = await startRenderedFake(geminiFakeRenderer);
  t.teardown(async () => {
    await fake.close();
    await gateway.close();
  });
  fake.answer({ kind: 'embedding', vectors: [[0.5, -0.25, 1], [0, 0.125, -1]], promptTokens: 4 });
  const client = sdkClient(gateway.url, fake.baseUrl, { 'x-gateway-provider': 'gemini' });
  const response = await client.embeddings.create({ model: 'gemini-embedding-001', input: ['alpha', 'beta'], dimensions: 3, encoding_format: 'float' });
  t.deepEqual(
    response.data.map((item) => item.embedding),
    [[0.5, -0.25, 1], [0, 0.125, -1]],
  );
  t.is(response.model, 'gemini-embedding-001');
  t.is(fake.requests[0].url, '/v1/models/gemini-embedding-001:batchEmbedContents');
  t.is(fake.requests[0].headers['x-goog-api-key'], PROVIDER_KEY);
  t.deepEqual(fake.body(0), {
    requests: [
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'alpha' }] }, outputDimensionality: 3 },
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'beta' }] }, outputDimensionality: 3 },
    ],
  });
  const encoded = await client.embeddings.create({ model: 'gemini-embedding-001', input: 'alpha' });
  t.deepEqual(encoded.data[0].embedding, [0.5, -0.25, 1], 'the SDK decodes the base64 it asks for by default');
});
