import test from 'ava';
import type { MultipartForm, UpstreamReply } from '../../../core/spec/index.js';
import { mapDeepgramError } from './deepgram-error.js';
import { deepgramFixture } from './deepgram-fake.js';
import { deepgramQuery, fromDeepgram } from './deepgram-transcription.js';

const form = (fields: Record<string, string>): MultipartForm => ({ fields, repeated: {}, files: [] });
const reply = (status: number, name: string): UpstreamReply => ({ status, headers: {}, body: Buffer.from(deepgramFixture(name)) });

test('the query: OpenAI model names become nova-3, language or detection, smart formatting', (t) => {
  t.is(deepgramQuery(form({ model: 'whisper-1' })).toString(), 'model=nova-3&smart_format=true&detect_language=true');
  t.is(deepgramQuery(form({ model: 'nova-2-medical', language: 'en-US' })).toString(), 'model=nova-2-medical&smart_format=true&language=en-US');
  t.throws(() => deepgramQuery(form({ model: 'a&b=c' })));
  t.throws(() => deepgramQuery(form({ model: 'nova-3', language: 'en&x=1' })));
});

test('the recorded answer as json (with its duration as usage) and verbose_json', (t) => {
  const body = JSON.parse(deepgramFixture('listen-response.json'));
  t.deepEqual(fromDeepgram(body, form({})), { text: 'Hello from the gateway.', usage: { type: 'duration', seconds: 4 } });
  t.like(fromDeepgram(body, form({ response_format: 'verbose_json' })), { task: 'transcribe', language: 'en', duration: 3.5 });
  t.throws(() => fromDeepgram({ results: {} }, form({})), { instanceOf: TypeError });
});

test("both of Deepgram's error shapes keep their message and code", (t) => {
  t.deepEqual(mapDeepgramError(reply(401, 'error-401.json')), { message: 'Invalid credentials.', type: 'authentication_error', param: null, code: 'INVALID_AUTH' });
  t.like(mapDeepgramError(reply(400, 'error-400-audio.json')), { message: 'Bad Request: failed to process audio: corrupt or unsupported data', code: 'Bad Request' });
  t.like(mapDeepgramError(reply(400, 'error-400-json.json')), { message: 'Invalid JSON submitted. Json deserialize error: missing field `url` at line 1 column 2', code: 'INVALID_JSON' });
});
