import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import { checkSpeechModelAndVoice } from '../../../core/api/speech-schema.js';
import type { UpstreamReply } from '../../../core/spec/index.js';
import { mapElevenLabsError } from './elevenlabs-error.js';
import { elevenLabsFixture } from './elevenlabs-fake.js';
import { elevenLabsSpeech, toElevenLabs } from './elevenlabs-speech.js';

const reply = (status: number, body: string): UpstreamReply => ({ status, headers: {}, body: Buffer.from(body) });
const recorded = (status: number, name: string): UpstreamReply => ({ status, headers: {}, body: elevenLabsFixture(name) });

test('formats: mp3, opus and pcm map to ElevenLabs output formats; speed goes in voice_settings', (t) => {
  t.is(toElevenLabs({ model: 'eleven_v3', input: 'hi', voice: 'abc123' }).outputFormat, 'mp3_44100_128');
  t.is(toElevenLabs({ model: 'eleven_v3', input: 'hi', voice: 'abc123', response_format: 'pcm' }).outputFormat, 'pcm_24000');
  t.deepEqual(toElevenLabs({ model: 'tts-1-hd', input: 'hi', voice: 'abc123', speed: 0.9 }).body, { text: 'hi', model_id: 'eleven_multilingual_v2', voice_settings: { speed: 0.9 } });
  for (const response_format of ['aac', 'flac', 'wav'] as const) {
    const error = t.throws(() => toElevenLabs({ model: 'eleven_v3', input: 'hi', voice: 'abc123', response_format }), { instanceOf: GatewayError }) as GatewayError;
    t.like(error.body, { param: 'response_format' });
  }
});

test("a voice id that could leave its path segment is refused; the core accepts any id for a provider declaring voices '*'", (t) => {
  t.throws(() => toElevenLabs({ model: 'eleven_v3', input: 'hi', voice: '../voices' }), { instanceOf: GatewayError });
  t.notThrows(() => checkSpeechModelAndVoice({ model: 'eleven_v3', input: 'hi', voice: 'JBFqnCBsd6RMkjVDRZzb' }, elevenLabsSpeech));
  t.throws(() => checkSpeechModelAndVoice({ model: 'tts-1', input: 'hi', voice: 'JBFqnCBsd6RMkjVDRZzb' }, { voices: ['ash'] }));
  t.throws(() => checkSpeechModelAndVoice({ model: 'gpt-9', input: 'hi', voice: 'JBFqnCBsd6RMkjVDRZzb' }, elevenLabsSpeech));
});

test('errors: detail objects keep message and status as code; validation lists are joined', (t) => {
  t.deepEqual(mapElevenLabsError(recorded(404, 'error-404.json')), {
    message: 'A voice with the voice_id 21m00Tcm4TlvDq8ikWAX was not found.',
    type: 'not_found_error',
    param: null,
    code: 'voice_not_found',
  });
  t.like(mapElevenLabsError(recorded(422, 'error-422.json')), { message: 'Field required', code: null });
  t.like(mapElevenLabsError(recorded(401, 'error-401-quota.json')), { type: 'authentication_error', code: 'quota_exceeded' });
  t.like(mapElevenLabsError(reply(400, '{"detail":"bad"}')), { message: 'bad' });
  t.regex(mapElevenLabsError(reply(502, '<html></html>')).message, /HTTP 502/);
});
