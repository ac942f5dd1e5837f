import test from 'ava';
import { elevenLabsFake, elevenLabsFixture } from './elevenlabs-fake.js';
import { elevenlabs } from './index.js';
import { type RenderedFake, startRenderedFake } from '../../../test/fakes/rendered-fake.js';
import { gatewayClient, startGateway, type TestGateway } from '../../../test/harness.js';

/** ElevenLabs text to speech through the gateway, with the OpenAI SDK as the client, against its loopback fake. */

let fake: RenderedFake;
let gateway: TestGateway;
const VOICE = 'JBFqnCBsd6RMkjVDRZzb';
const ok = { kind: 'text', text: '', finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } } as const;

test.before(async () => {
  fake = await startRenderedFake(elevenLabsFake);
  gateway = await startGateway({ providers: [elevenlabs()] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const client = () => gatewayClient(gateway.url, { 'x-gateway-provider': 'elevenlabs', 'x-gateway-custom-host': `${fake.origin}/v1` }, 'el-key');

test.serial("speech: the voice id in the path, the format as output_format, the key in xi-api-key; the audio comes back byte for byte", async (t) => {
  fake.answer(ok);
  const audio = await client().audio.speech.create({ model: 'eleven_multilingual_v2', voice: VOICE, input: 'Hello from the gateway', response_format: 'opus', speed: 1.1 });
  t.deepEqual(Buffer.from(await audio.arrayBuffer()), elevenLabsFixture('speech.mp3'));
  const received = fake.requests.at(-1)!;
  t.is(received.url, `/v1/text-to-speech/${VOICE}?output_format=opus_48000_128`);
  t.is(received.headers['xi-api-key'], 'el-key');
  t.is(received.headers.authorization, undefined);
  t.deepEqual(fake.body(fake.requests.length - 1), { text: 'Hello from the gateway', model_id: 'eleven_multilingual_v2', voice_settings: { speed: 1.1 } });
});

test.serial("OpenAI's model names become ElevenLabs models; mp3 is the default format", async (t) => {
  fake.answer(ok);
  await (await client().audio.speech.create({ model: 'tts-1', voice: VOICE, input: 'Fast' })).arrayBuffer();
  t.is(fake.requests.at(-1)!.url, `/v1/text-to-speech/${VOICE}?output_format=mp3_44100_128`);
  t.is(fake.body(fake.requests.length - 1).model_id, 'eleven_flash_v2_5');
});

test.serial("an OpenAI voice name, or a format ElevenLabs lacks, is a 400 naming the field before anything is sent", async (t) => {
  const before = fake.requests.length;
  const voice = await t.throwsAsync(client().audio.speech.create({ model: 'eleven_v3', voice: 'alloy', input: 'x' }));
  t.like((voice as unknown as { status: number; error: Record<string, unknown> }).error, { param: 'voice', code: 'invalid_value' });
  const format = await t.throwsAsync(client().audio.speech.create({ model: 'eleven_v3', voice: VOICE, input: 'x', response_format: 'flac' }));
  t.like((format as unknown as { status: number }), { status: 400 });
  t.is(fake.requests.length, before);
});

test.serial("ElevenLabs' error detail reaches the client with its status, message and code", async (t) => {
  fake.answer({ kind: 'error', status: 429, message: 'Too many concurrent requests.', retryAfter: '3' });
  const error = (await t.throwsAsync(client().audio.speech.create({ model: 'eleven_v3', voice: VOICE, input: 'x' }))) as unknown as { status: number; error: Record<string, unknown>; headers: Headers };
  t.is(error.status, 429);
  t.like(error.error, { message: 'Too many concurrent requests.', code: 'too_many_concurrent_requests', provider: 'elevenlabs' });
  t.is(error.headers.get('retry-after'), '3');
});
