import { toFile } from 'openai';
import { type Check, CheckSkipped, expect, routedAs } from './check.js';
import { expectOneCleanRequest, expectRefused, nextTrace, show } from './expectations.js';
import type { SpeechScenario, TranscriptionScenario } from '../spec/conformance.js';

/** A short mono 16-bit PCM WAV file (8 kHz, 0.1 s of a ramp): real audio bytes, the same every run. */
function conformanceWav(): Buffer {
  const samples = 800;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples * 2, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples * 2, 40);
  const data = Buffer.alloc(samples * 2);
  for (let index = 0; index < samples; index++) data.writeInt16LE(((index * 97) % 4096) - 2048, index * 2);
  return Buffer.concat([header, data]);
}

const WAV = conformanceWav();
/** Bytes that stand for the provider's audio: an MPEG frame header, then a pattern no gateway would write. */
const SPEECH: SpeechScenario = { kind: 'speech', audio: Buffer.concat([Buffer.from([0xff, 0xf3, 0x44, 0xc4]), Buffer.from('conformance-speech-audio-'.repeat(8))]) };
const TRANSCRIPT: TranscriptionScenario = { kind: 'transcription', text: 'The conformance kit speaks clearly.', seconds: 0.1 };

const speech: Check = {
  name: 'speech',
  description: "speech answers the provider's audio bytes unchanged, from one upstream request carrying the provider's credential",
  async run(context) {
    if (!context.plugin.operations.speech) throw new CheckSkipped('the plugin declares no speech');
    context.server.scenario = SPEECH;
    const trace = nextTrace('speech');
    const before = context.server.received.length;
    const model = context.subject.speechModel ?? 'tts-1';
    const voice = context.subject.speechVoice ?? 'alloy';
    const response = await context.client.audio.speech.create(
      { model, voice, input: 'The conformance kit speaks clearly.', response_format: 'mp3' },
      { headers: { 'x-gateway-trace-id': trace } },
    );
    const audio = Buffer.from(await response.arrayBuffer());
    expectOneCleanRequest(context, context.server.received.slice(before), 'speech');
    expect(audio.equals(Buffer.from(SPEECH.audio)), `the client got ${audio.length} bytes that are not the provider's ${SPEECH.audio.length}`);
    const operation = await routedAs(context, trace);
    expect(operation === 'speech', `POST /v1/audio/speech ran as ${operation ?? 'nothing'}, not as the speech operation`);
  },
};

const speechUnsupported: Check = {
  name: 'speech.unsupported',
  description: 'a plugin without speech answers POST /v1/audio/speech with a 400 naming it, and nothing is sent upstream',
  async run(context) {
    if (context.plugin.operations.speech) throw new CheckSkipped('the plugin declares speech');
    await expectRefused(context, '/v1/audio/speech', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input: 'Hello.' }),
    });
  },
};

const transcription: Check = {
  name: 'transcription',
  description: "transcription sends the audio byte for byte in one upstream request and answers OpenAI's JSON transcript",
  async run(context) {
    if (!context.plugin.operations.transcription) throw new CheckSkipped('the plugin declares no transcription');
    context.server.scenario = TRANSCRIPT;
    const trace = nextTrace('transcription');
    const before = context.server.received.length;
    const model = context.subject.transcriptionModel ?? 'whisper-1';
    const result = await context.client.audio.transcriptions.create(
      { model, file: await toFile(WAV, 'conformance.wav', { type: 'audio/wav' }) },
      { headers: { 'x-gateway-trace-id': trace } },
    );
    const request = expectOneCleanRequest(context, context.server.received.slice(before), 'transcription');
    expect(request.body.includes(WAV), "the provider's request does not carry the uploaded audio byte for byte");
    expect(result.text === TRANSCRIPT.text, `text ${show(result.text)}, expected ${show(TRANSCRIPT.text)}`);
    const operation = await routedAs(context, trace);
    expect(operation === 'transcription', `POST /v1/audio/transcriptions ran as ${operation ?? 'nothing'}, not as the transcription operation`);
  },
};

const transcriptionUnsupported: Check = {
  name: 'transcription.unsupported',
  description: 'a plugin without transcription answers POST /v1/audio/transcriptions with a 400 naming it, and nothing is sent upstream',
  async run(context) {
    if (context.plugin.operations.transcription) throw new CheckSkipped('the plugin declares transcription');
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('file', new Blob([WAV], { type: 'audio/wav' }), 'conformance.wav');
    await expectRefused(context, '/v1/audio/transcriptions', { body: form });
  },
};

/** The speech and transcription checks, run after the battery's others. */
export const audioChecks: readonly Check[] = [speech, speechUnsupported, transcription, transcriptionUnsupported];
