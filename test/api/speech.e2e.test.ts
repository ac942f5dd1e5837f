import test from 'ava';
import { openAIHandler, openAISpeechBytes } from '../fakes/openai-fake.js';
import { loggedOnce } from '../harness.js';
import { type ApiSetup, startApi } from './api-setup.js';

let api: ApiSetup;
let release: () => void = () => {};
let upstreamEnded = false;

test.before(async () => {
  api = await startApi(async (request, response) => {
    if (request.headers['x-scenario'] === 'slow-audio') {
      // The first part of the audio now, the rest only once the test has seen the first bytes.
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      response.writeHead(200, { 'content-type': 'audio/mpeg' });
      response.write(openAISpeechBytes.subarray(0, 4096));
      await gate;
      upstreamEnded = true;
      response.end(openAISpeechBytes.subarray(4096));
      return;
    }
    if (request.headers['x-scenario'] === 'provider-refuses') {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'Input contains unsupported text.', type: 'invalid_request_error', param: 'input', code: null } }));
      return;
    }
    return openAIHandler(request, response);
  });
});

test.after.always(async () => {
  release();
  await api?.close();
});

async function readAll(body: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

test('speech: the audio bytes are exactly what the provider sent, as application/octet-stream; requests and characters are logged', async (t) => {
  const { client, trace } = api.client('speech');
  const params = { model: 'tts-1', input: 'Héllo wörld 👋', voice: 'alloy' as const, response_format: 'mp3' as const, speed: 1.5 };
  const response = await client.audio.speech.create(params);
  t.is(response.headers.get('content-type'), 'application/octet-stream');
  const bytes = await readAll(response.body!);
  t.true(bytes.equals(openAISpeechBytes));
  t.deepEqual(api.received(trace).json(), params);
  t.is(api.received(trace).url, '/v1/audio/speech');
  const entry = await loggedOnce(api.gateway, trace);
  t.like(entry, { operation: 'speech', status: 200, outcome: 'ok', model: 'tts-1' });
  t.deepEqual(entry.units, { requests: 1, characters: 13 });
});

test('speech is streamed: the first bytes reach the client before the provider has finished', async (t) => {
  upstreamEnded = false;
  const { client } = api.client('speech-stream', { 'x-scenario': 'slow-audio' });
  const response = await client.audio.speech.create({ model: 'tts-1-hd', input: 'stream me', voice: 'nova' });
  const reader = response.body!.getReader();
  const chunks: Buffer[] = [];
  let received = 0;
  while (received < 4096) {
    const read = await reader.read();
    if (read.done) break;
    chunks.push(Buffer.from(read.value));
    received += read.value.byteLength;
  }
  t.is(received, 4096, 'the first part arrived on its own');
  t.false(upstreamEnded, 'the provider had not finished when the client read the first bytes');
  release();
  for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(Buffer.from(read.value));
  t.true(upstreamEnded);
  t.true(Buffer.concat(chunks).equals(openAISpeechBytes));
});

test("speech edge values and the provider's own models and voices are accepted", async (t) => {
  for (const params of [
    { model: 'tts-1', input: 'a'.repeat(4096), voice: 'shimmer', speed: 0.25 },
    { model: 'tts-1', input: 'b', voice: 'echo', speed: 4, response_format: 'pcm' },
    { model: 'gpt-4o-mini-tts', input: 'c', voice: 'coral', instructions: 'Speak softly.' },
  ]) {
    const { client, trace } = api.client('speech-edge');
    const response = await client.audio.speech.create(params as never);
    t.true((await readAll(response.body!)).equals(openAISpeechBytes));
    t.deepEqual(api.received(trace).json(), params);
  }
});

test("a provider's refusal of a speech request is an OpenAI-shaped JSON error, not audio", async (t) => {
  const { client, trace } = api.client('speech-refused', { 'x-scenario': 'provider-refuses' });
  const error = await t.throwsAsync(client.audio.speech.create({ model: 'tts-1', input: 'x', voice: 'alloy' }));
  t.like(error, { status: 400, param: 'input', message: '400 Input contains unsupported text.' });
  t.like(await loggedOnce(api.gateway, trace), { operation: 'speech', status: 400, outcome: 'error' });
});
