import test from 'ava';
import { toFile } from 'openai';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { multipartHandler, receivedForm } from '../fakes/multipart-fake.js';
import { makePng } from '../fakes/png.js';
import { PROVIDER_KEY, sdkClient, startGateway, type TestGateway } from '../harness.js';
import { privateUploads } from './uploads.js';

const { noUploadsLeft } = privateUploads('multipart-e2e');

let gateway: TestGateway;
let fake: Fake;

test.before(async () => {
  fake = await startFake(multipartHandler);
  gateway = await startGateway();
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const lastRequest = () => fake.requests[fake.requests.length - 1];

test.serial('images.edit with a mask: files reach the provider byte for byte, fields as sent', async (t) => {
  const image = makePng({ width: 64, height: 64, colourType: 2 });
  const mask = makePng({ width: 64, height: 64, colourType: 6 });
  const client = sdkClient(gateway.url, fake.baseUrl);
  const before = fake.requests.length;
  const result = await client.images.edit({
    image: await toFile(image, 'photo.png', { type: 'image/png' }),
    mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
    prompt: 'A sunlit indoor lounge area with a pool',
    model: 'dall-e-2',
    n: 2,
    size: '256x256',
    response_format: 'url',
  });
  t.is(fake.requests.length, before + 1);
  t.deepEqual(result.data, [{ url: 'https://images.example.test/out.png' }, { url: 'https://images.example.test/out.png' }]);
  t.is(result.created, 1_700_000_000);
  t.false('extra_field' in result, 'strict mode keeps only the image response fields');
  const request = lastRequest();
  t.is(request.url, '/v1/images/edits');
  t.is(request.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  t.is(Number(request.headers['content-length']), request.body.length);
  const form = await receivedForm(request);
  t.true(form.files.image.bytes.equals(image));
  t.true(form.files.mask.bytes.equals(mask));
  t.is(form.files.image.filename, 'photo.png');
  t.deepEqual(form.fields, { prompt: 'A sunlit indoor lounge area with a pool', model: 'dall-e-2', n: '2', size: '256x256', response_format: 'url' });
  await noUploadsLeft(t);
});

test.serial('images.edit without a mask takes an image with an alpha channel', async (t) => {
  const image = makePng({ width: 32, height: 32, colourType: 6 });
  const client = sdkClient(gateway.url, fake.baseUrl);
  const result = await client.images.edit({ image: await toFile(image, 'rgba.png'), prompt: 'add a red hat', response_format: 'b64_json' });
  t.deepEqual(result.data, [{ b64_json: 'iVBORw0KGgo=' }]);
  const form = await receivedForm(lastRequest());
  t.true(form.files.image.bytes.equals(image));
  t.false('mask' in form.files);
  await noUploadsLeft(t);
});

test.serial('images.createVariation forwards the image intact', async (t) => {
  const image = makePng({ width: 48, height: 48, colourType: 2 });
  const client = sdkClient(gateway.url, fake.baseUrl);
  const result = await client.images.createVariation({ image: await toFile(image, 'v.png'), n: 3, size: '512x512' });
  t.is(result.data?.length, 3);
  t.is(lastRequest().url, '/v1/images/variations');
  const form = await receivedForm(lastRequest());
  t.true(form.files.image.bytes.equals(image));
  t.deepEqual(form.fields, { n: '3', size: '512x512' });
  await noUploadsLeft(t);
});

test.serial('audio.transcriptions.create uploads the audio intact; JSON and text answers are relayed', async (t) => {
  const audio = Buffer.from(Array.from({ length: 300_000 }, (_, index) => (index * 31) & 0xff));
  const client = sdkClient(gateway.url, fake.baseUrl);
  const json = await client.audio.transcriptions.create({ file: await toFile(audio, 'speech.mp3', { type: 'audio/mpeg' }), model: 'whisper-1', language: 'fr' });
  t.is(json.text, 'Bonjour, comment ça va ?');
  const form = await receivedForm(lastRequest());
  t.true(form.files.file.bytes.equals(audio));
  t.is(form.files.file.filename, 'speech.mp3');
  t.deepEqual(form.fields, { model: 'whisper-1', language: 'fr' });

  const text = await client.audio.transcriptions.create({ file: await toFile(audio, 'speech.mp3'), model: 'whisper-1', response_format: 'text' });
  t.is(text, 'Bonjour, comment ça va ?\n');
  const entries = await gateway.waitForEntries(2);
  const logged = entries.filter((entry) => entry.operation === 'transcription');
  t.like(logged.at(-2), { status: 200, model: 'whisper-1', units: { requests: 1, seconds: 3 } }, "the JSON answer's duration is logged");
  t.like(logged.at(-1), { status: 200, model: 'whisper-1', units: { requests: 1 } });

  const tokens = await client.audio.transcriptions.create({ file: await toFile(audio, 'speech.mp3'), model: 'gpt-4o-transcribe' });
  t.is(tokens.text, 'Bonjour, comment ça va ?');
  const withTokens = (await gateway.waitForEntries(entries.length + 1)).filter((entry) => entry.operation === 'transcription').at(-1);
  t.deepEqual(withTokens?.usage, { promptTokens: 14, completionTokens: 45, totalTokens: 59 });
  await noUploadsLeft(t);
});

test.serial('audio.translations.create reaches the translations endpoint', async (t) => {
  const client = sdkClient(gateway.url, fake.baseUrl);
  const result = await client.audio.translations.create({ file: await toFile(Buffer.from('RIFF....WAVEfmt '), 'a.wav'), model: 'whisper-1' });
  t.is(result.text, 'Hello, how are you?');
  t.is(lastRequest().url, '/v1/audio/translations');
  await noUploadsLeft(t);
});

test.serial('a provider without the operation gets 400 naming provider and operation; nothing is sent', async (t) => {
  const limited = await startGateway({
    providers: [
      {
        manifest: { id: 'chat-only', kind: 'provider', specificationVersion: 'v1', version: '1.0.0', description: 'test provider with chat only', params: { type: 'object' } },
        params: {},
        create: () => ({
          id: 'chat-only',
          name: 'Chat only',
          operations: {},
          baseUrl: () => fake.baseUrl,
          auth: () => ({}),
          authHeaders: [],
          mapError: () => ({ message: 'x', type: 'api_error', param: null, code: null }),
        }),
      },
    ],
  });
  try {
    const client = sdkClient(limited.url, fake.baseUrl, { 'x-gateway-provider': 'chat-only' });
    const before = fake.requests.length;
    const error = await t.throwsAsync(client.images.createVariation({ image: await toFile(makePng({ width: 8, height: 8 }), 'a.png') }));
    t.is((error as { status?: number }).status, 400);
    t.regex(error.message, /"chat-only" does not support the operation "imageVariation"/);
    t.is(fake.requests.length, before);
    await noUploadsLeft(t);
  } finally {
    await limited.close();
  }
});
