import test from 'ava';
import { cohere } from './index.js';
import { openai } from '../openai/index.js';
import { cohereFixture } from './cohere-fake.js';
import { type Fake, startFake } from '../../../test/fakes/openai-fake.js';
import { gatewayClient, startGateway, type TestGateway } from '../../../test/harness.js';

/** Cohere embeddings through the gateway; needs the core's `/v1/embeddings` route (unified-API issue). */

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(cohereFixture('embed-response.json'));
  });
  gateway = await startGateway({ providers: [openai(), cohere()] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

test.serial('Embed v2 through the SDK', async (t) => {
  const client = gatewayClient(gateway.url, { 'x-gateway-provider': 'cohere', 'x-gateway-custom-host': `${fake.origin}/v2` }, 'co-key');
  const result = await client.embeddings.create({ model: 'embed-v4.0', input: ['hello', 'goodbye'], encoding_format: 'float' });
  t.deepEqual(result.data[0].embedding, [0.016296387, -0.008354187, -0.04699707]);
  t.is(result.usage.prompt_tokens, 2);
  const received = fake.requests.at(-1)!;
  t.is(received.url, '/v2/embed');
  t.is(received.headers.authorization, 'Bearer co-key');
  t.deepEqual(received.json(), { model: 'embed-v4.0', texts: ['hello', 'goodbye'], input_type: 'search_document', embedding_types: ['float'] });
});
