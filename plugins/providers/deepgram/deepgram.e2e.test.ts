import test from 'ava';
import { toFile } from 'openai';
import { deepgramFake } from './deepgram-fake.js';
import { deepgram } from './index.js';
import { type RenderedFake, startRenderedFake } from '../../../test/fakes/rendered-fake.js';
import { gatewayClient, startGateway, type TestGateway } from '../../../test/harness.js';

/** Deepgram transcription through the gateway, with the OpenAI SDK as the client, against its loopback fake. */

let fake: RenderedFake;
let gateway: TestGateway;
const ok = { kind: 'text', text: '', finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } } as const;
const AUDIO = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(64, 7)]);

test.before(async () => {
  fake = await startRenderedFake(deepgramFake);
  gateway = await startGateway({ providers: [deepgram()] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const client = () => gatewayClient(gateway.url, { 'x-gateway-provider': 'deepgram', 'x-gateway-custom-host': `${fake.origin}/v1` }, 'dg-key');

test.serial('json: the audio goes up as the raw body with its type, the key as Token; the transcript comes back as {text}', async (t) => {
  fake.answer(ok);
  const result = await client().audio.transcriptions.create({ file: await toFile(AUDIO, 'note.wav', { type: 'audio/wav' }), model: 'whisper-1' });
  t.is(result.text, 'Hello from the gateway.');
  const received = fake.requests.at(-1)!;
  t.is(received.url, '/v1/listen?model=nova-3&smart_format=true&detect_language=true');
  t.is(received.headers.authorization, 'Token dg-key');
  t.is(received.headers['content-type'], 'audio/wav');
  t.deepEqual(received.body, AUDIO);
});

test.serial('verbose_json: language, duration and punctuated words; a language is sent as given', async (t) => {
  fake.answer(ok);
  const result = (await client().audio.transcriptions.create({ file: await toFile(AUDIO, 'note.wav', { type: 'audio/wav' }), model: 'nova-2', language: 'en', response_format: 'verbose_json' })) as unknown as Record<string, unknown>;
  t.like(result, { task: 'transcribe', language: 'en', duration: 3.5, text: 'Hello from the gateway.' });
  t.deepEqual((result.words as unknown[])[3], { word: 'gateway.', start: 0.72, end: 1.2 });
  t.is(fake.requests.at(-1)!.url, '/v1/listen?model=nova-2&smart_format=true&language=en');
});

test.serial('srt, vtt and text are refused naming response_format before anything is sent', async (t) => {
  const before = fake.requests.length;
  for (const response_format of ['srt', 'vtt', 'text'] as const) {
    const error = (await t.throwsAsync(client().audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav', { type: 'audio/wav' }), model: 'nova-3', response_format }))) as unknown as { status: number; error: Record<string, unknown> };
    t.is(error.status, 400);
    t.like(error.error, { param: 'response_format' });
  }
  t.is(fake.requests.length, before);
});

test.serial("Deepgram's error reaches the client with its status, message and code", async (t) => {
  fake.answer({ kind: 'error', status: 401, message: 'Invalid credentials.' });
  const error = (await t.throwsAsync(client().audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav', { type: 'audio/wav' }), model: 'nova-3' }))) as unknown as { status: number; error: Record<string, unknown> };
  t.is(error.status, 401);
  t.like(error.error, { message: 'Invalid credentials.', code: 'INVALID_AUTH', provider: 'deepgram' });
});
