import test from 'ava';
import OpenAI from 'openai';
import { bedrock } from './index.js';
import { openai } from '../openai/index.js';
import { bedrockFixture, checkSigV4 } from './bedrock-fake.js';
import { type Fake, startFake } from '../../../test/fakes/openai-fake.js';
import { gatewayClient, startGateway, type TestGateway } from '../../../test/harness.js';

/**
 * Non-chat operations of the Bedrock plugin through the gateway. These need the core's
 * `/v1/embeddings` route.
 */

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake((request, response) => {
    const cohere = request.url.includes('cohere.embed');
    // InvokeModel reports the input token count in a header (Cohere's body has none).
    response
      .writeHead(200, { 'content-type': 'application/json', 'x-amzn-bedrock-input-token-count': cohere ? '4' : '6' })
      .end(bedrockFixture(cohere ? 'cohere-embed-response.json' : 'titan-embed-response.json'));
  });
  gateway = await startGateway({ providers: [openai(), bedrock()] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const client = () =>
  gatewayClient(
    gateway.url,
    {
      'x-gateway-provider': 'bedrock',
      'x-gateway-custom-host': fake.origin,
      'x-gateway-cloud-c-secret-access-key': 'OPSSECRET',
      'x-gateway-cloud-c-region': 'us-west-2',
    },
    'AKIDOPS',
  );

test.serial('Titan embeddings through InvokeModel, signed', async (t) => {
  const before = fake.requests.length;
  const result = await client().embeddings.create({ model: 'amazon.titan-embed-text-v2:0', input: 'hello', encoding_format: 'float' });
  t.deepEqual(result.data[0].embedding, [0.0123, -0.0456, 0.0789, 0.25]);
  t.is(result.usage.prompt_tokens, 6);
  const received = fake.requests[before];
  t.is(received.url, '/model/amazon.titan-embed-text-v2%3A0/invoke');
  t.deepEqual(received.json(), { inputText: 'hello' });
  t.deepEqual(checkSigV4(received, { accessKeyId: 'AKIDOPS', secretAccessKey: 'OPSSECRET' }, 'us-west-2'), []);
});

test.serial('Cohere embeddings on Bedrock take a list', async (t) => {
  const before = fake.requests.length;
  const result = await client().embeddings.create({ model: 'cohere.embed-english-v3', input: ['hello', 'world'], encoding_format: 'float' });
  t.is(result.data.length, 2);
  t.deepEqual(result.data[1].embedding, [0.4, 0.5, -0.6]);
  t.deepEqual(result.usage, { prompt_tokens: 4, total_tokens: 4 }, 'usage from the token-count header');
  t.deepEqual(fake.requests[before].json(), { texts: ['hello', 'world'], input_type: 'search_document' });
});

test.serial('Titan refuses a list of several texts with a 400 on input', async (t) => {
  const error = await t.throwsAsync(client().embeddings.create({ model: 'amazon.titan-embed-text-v1', input: ['a', 'b'] }), { instanceOf: OpenAI.BadRequestError });
  t.is((error as InstanceType<typeof OpenAI.BadRequestError>).param, 'input');
});
