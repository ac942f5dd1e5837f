import test from 'ava';
import { startRenderedFake } from '../../../test/fakes/rendered-fake.js';
import { PROVIDER_KEY, sdkClient, startGateway } from '../../../test/harness.js';
import { vertexAI } from './index.js';
import { vertexFakeRenderer } from './vertex-ai-fake.js';

// Needs the core's POST /v1/embeddings route (added in parallel by the unified-API work).
test('embeddings through the gateway: predict receives one instance per input, usage comes from the statistics', async (t) => {
  const gateway = await startGateway({ providers: [vertexAI()] });
  const fake = await startRenderedFake(vertexFakeRenderer);
  t.teardown(async () => {
    await fake.close();
    await gateway.close();
  });
  fake.answer({ kind: 'embedding', vectors: [[0.5, -0.25], [1, 0.125]], promptTokens: 9 });
  const client = sdkClient(gateway.url, fake.baseUrl, {
    'x-gateway-provider': 'vertex-ai',
    'x-gateway-cloud-b-project-id': 'acme-prod',
    'x-gateway-cloud-b-region': 'us-central1',
  });
  const response = await client.embeddings.create({ model: 'text-embedding-005', input: ['alpha', 'beta'], encoding_format: 'float' });
  t.deepEqual(
    response.data.map((item) => item.embedding),
    [[0.5, -0.25], [1, 0.125]],
  );
  t.deepEqual(response.usage, { prompt_tokens: 9, total_tokens: 9 });
  t.is(fake.requests[0].url, '/v1/projects/acme-prod/locations/us-central1/publishers/google/models/text-embedding-005:predict');
  t.is(fake.requests[0].headers.authorization, `Bearer ${PROVIDER_KEY}`);
  t.deepEqual(fake.body(0), { instances: [{ content: 'alpha' }, { content: 'beta' }] });
});
