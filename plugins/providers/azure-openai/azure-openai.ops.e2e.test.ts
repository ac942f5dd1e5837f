import test from 'ava';
import OpenAI from 'openai';
import { azureOpenAI } from './index.js';
import { openai } from '../openai/index.js';
import { azureFixture, azureStreamEvents } from './azure-openai-fake.js';
import { receivedForm } from '../../../test/fakes/multipart-fake.js';
import { type Fake, startFake } from '../../../test/fakes/openai-fake.js';
import { makePng } from '../../../test/fakes/png.js';
import { gatewayClient, startGateway, type TestGateway } from '../../../test/harness.js';

/**
 * Azure OpenAI's non-chat operations through the gateway: completions, embeddings, images,
 * speech, transcription and models.
 */

const AUDIO = Buffer.from('ID3\u0004\u0000fake-mp3-bytes', 'latin1');
let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake((request, response) => {
    const path = request.url.split('?')[0];
    if (path.endsWith('/completions') && !path.endsWith('/chat/completions')) {
      if (request.json().stream) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const event of azureStreamEvents('completion-stream.txt')) response.write(event);
        response.end();
      } else response.writeHead(200, { 'content-type': 'application/json' }).end(azureFixture('completion.json'));
    } else if (path.endsWith('/embeddings')) response.writeHead(200, { 'content-type': 'application/json' }).end(azureFixture('embeddings.json'));
    else if (path.endsWith('/images/generations')) response.writeHead(200, { 'content-type': 'application/json' }).end(azureFixture('image-generation.json'));
    else if (path.endsWith('/audio/speech')) response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(AUDIO);
    else if (path.endsWith('/audio/transcriptions')) response.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"Hello from the clip."}');
    else if (path.endsWith('/images/edits')) response.writeHead(200, { 'content-type': 'application/json' }).end(azureFixture('image-generation.json'));
    else if (path === '/openai/models') response.writeHead(200, { 'content-type': 'application/json' }).end(azureFixture('models.json'));
    else response.writeHead(404).end();
  });
  gateway = await startGateway({ providers: [openai(), azureOpenAI()] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const client = (deployment: string) =>
  gatewayClient(
    gateway.url,
    {
      'x-gateway-provider': 'azure-openai',
      'x-gateway-custom-host': `${fake.origin}/openai`,
      'x-gateway-cloud-a-resource-name': 'contoso',
      'x-gateway-cloud-a-deployment-id': deployment,
      'x-gateway-cloud-a-api-version': '2024-10-21',
    },
    'azure-key-0000',
  );

test.serial('completions, plain and streamed with usage', async (t) => {
  const before = fake.requests.length;
  const completion = await client('instruct').completions.create({ model: 'gpt-35-turbo-instruct', prompt: 'An LLM proxy is' });
  t.is(completion.choices[0].text, ' a gateway.');
  t.is(fake.requests[before].url, '/openai/deployments/instruct/completions?api-version=2024-10-21');
  t.is(fake.requests[before].headers['api-key'], 'azure-key-0000');
  const stream = await client('instruct').completions.create({ model: 'gpt-35-turbo-instruct', prompt: 'An LLM proxy is', stream: true, stream_options: { include_usage: true } });
  let text = '';
  let total = 0;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.text ?? '';
    total = chunk.usage?.total_tokens ?? total;
  }
  t.is(text, ' a gateway.');
  t.is(total, 8);
});

test.serial('embeddings', async (t) => {
  const before = fake.requests.length;
  const result = await client('embed').embeddings.create({ model: 'text-embedding-3-small', input: 'hi', encoding_format: 'float' });
  t.deepEqual(result.data[0].embedding, [0.0023, -0.0094, 0.0158]);
  t.is(fake.requests[before].url, '/openai/deployments/embed/embeddings?api-version=2024-10-21');
});

test.serial('image generation', async (t) => {
  const result = await client('dalle3').images.generate({ model: 'dall-e-3', prompt: 'a fox' });
  t.is(result.data?.[0].revised_prompt, 'A watercolor fox in a snowy forest.');
  t.true(fake.requests.at(-1)!.url.startsWith('/openai/deployments/dalle3/images/generations?'));
});

test.serial('speech returns the audio bytes', async (t) => {
  const response = await client('tts').audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello' });
  t.deepEqual(Buffer.from(await response.arrayBuffer()), AUDIO);
  t.true(fake.requests.at(-1)!.url.startsWith('/openai/deployments/tts/audio/speech?'));
});

test.serial('transcription: the form reaches the deployment with the file bytes intact', async (t) => {
  const clip = Buffer.from([0x49, 0x44, 0x33, 0, 13, 10, 0xff, 0x2d, 0x2d]);
  const result = await client('whisper').audio.transcriptions.create({ model: 'whisper-1', file: await OpenAI.toFile(clip, 'clip.mp3', { type: 'audio/mpeg' }) });
  t.is(result.text, 'Hello from the clip.');
  const received = fake.requests.at(-1)!;
  t.is(received.url, '/openai/deployments/whisper/audio/transcriptions?api-version=2024-10-21');
  const form = await new Response(received.body, { headers: { 'content-type': String(received.headers['content-type']) } }).formData();
  t.is(form.get('model'), 'whisper-1');
  t.deepEqual(Buffer.from(await (form.get('file') as File).arrayBuffer()), clip);
});

test.serial('image edit', async (t) => {
  const png = makePng({ width: 32, height: 32, colourType: 6 });
  const result = await client('dalle').images.edit({ model: 'dall-e-2', prompt: 'add a hat', image: await OpenAI.toFile(png, 'fox.png', { type: 'image/png' }) });
  t.is(result.data?.[0].revised_prompt, 'A watercolor fox in a snowy forest.');
  t.true(fake.requests.at(-1)!.url.startsWith('/openai/deployments/dalle/images/edits?'));
  const received = await receivedForm(fake.requests.at(-1)!);
  t.true(received.files.image.bytes.equals(png), 'the image reaches Azure byte for byte');
});

test.serial('models: the resource\'s models in the OpenAI list shape', async (t) => {
  const list = await client('any').models.list();
  t.deepEqual(
    list.data.map((model) => model.id),
    ['gpt-4o-2024-08-06', 'text-embedding-3-small'],
  );
  t.is(fake.requests.at(-1)!.url, '/openai/models?api-version=2024-10-21');
});
