import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProviderFakeRenderer, type ReceivedRequest, type RenderedAnswer, requestJson, type Scenario } from '../../../core/spec/index.js';

const fixtures = join(process.cwd(), 'plugins/providers/elevenlabs/__fixtures__');

export const elevenLabsFixture = (name: string): Buffer => readFileSync(join(fixtures, name));

const JSON_TYPE = { 'content-type': 'application/json' };
const FORMATS = new Set(['mp3_22050_32', 'mp3_44100_32', 'mp3_44100_64', 'mp3_44100_96', 'mp3_44100_128', 'mp3_44100_192', 'pcm_16000', 'pcm_22050', 'pcm_24000', 'pcm_44100', 'ulaw_8000', 'opus_48000_32', 'opus_48000_64', 'opus_48000_96', 'opus_48000_128', 'opus_48000_192']);
const CONTENT_TYPE: Record<string, string> = { mp3: 'audio/mpeg', pcm: 'audio/pcm', opus: 'audio/ogg', ulaw: 'audio/basic' };

const failure = (status: number, code: string, message: string, retryAfter?: string): RenderedAnswer => ({
  status,
  headers: retryAfter === undefined ? JSON_TYPE : { ...JSON_TYPE, 'retry-after': retryAfter },
  chunks: [JSON.stringify({ detail: { status: code, message } })],
});

/** What ElevenLabs would refuse: another path, an unknown output format, a body without text or with OpenAI's field names. */
function refusal(request: ReceivedRequest): RenderedAnswer | undefined {
  const [path, query = ''] = request.url.split('?');
  const voice = /\/text-to-speech\/([A-Za-z0-9]+)$/.exec(path)?.[1];
  if (request.method !== 'POST' || !voice) return failure(404, 'not_found', `no route for ${request.method} ${path}`);
  const format = new URLSearchParams(query).get('output_format') ?? 'mp3_44100_128';
  if (!FORMATS.has(format)) return failure(422, 'invalid_output_format', `output_format ${format} is not supported`);
  const body = requestJson(request);
  if (typeof body.text !== 'string' || body.text === '') {
    return { status: 422, headers: JSON_TYPE, chunks: [JSON.stringify({ detail: [{ type: 'missing', loc: ['body', 'text'], msg: 'Field required', input: body }] })] };
  }
  for (const field of ['input', 'voice', 'model', 'response_format', 'speed']) {
    if (field in body) return { status: 422, headers: JSON_TYPE, chunks: [JSON.stringify({ detail: [{ type: 'extra_forbidden', loc: ['body', field], msg: 'Extra inputs are not permitted' }] })] };
  }
  return undefined;
}

/**
 * ElevenLabs text to speech, faked: `POST …/text-to-speech/<voice id>?output_format=…` with the key in
 * `xi-api-key` and `{text, model_id, voice_settings?}`; answers the recorded audio bytes (in two
 * writes), and errors as `{"detail": {status, message}}` or FastAPI's validation list.
 */
export const elevenLabsFake: ProviderFakeRenderer = {
  classify: (request) => ({ operation: /\/text-to-speech\/[^/?]+(\?|$)/.test(request.url) ? 'speech' : 'other', stream: false }),
  renderSpeech(scenario, request) {
    const refused = refusal(request);
    if (refused) return refused;
    const format = new URLSearchParams(request.url.split('?')[1] ?? '').get('output_format') ?? 'mp3_44100_128';
    const audio = Buffer.from(scenario.audio);
    return { status: 200, headers: { 'content-type': CONTENT_TYPE[format.split('_')[0]] ?? 'application/octet-stream' }, chunks: [audio.subarray(0, 5), audio.subarray(5)] };
  },
  render(scenario: Scenario, request: ReceivedRequest): RenderedAnswer {
    if (scenario.kind === 'error') return failure(scenario.status, scenario.status === 429 ? 'too_many_concurrent_requests' : 'error', scenario.message, scenario.retryAfter);
    const refused = refusal(request);
    if (refused) return refused;
    const format = new URLSearchParams(request.url.split('?')[1] ?? '').get('output_format') ?? 'mp3_44100_128';
    const audio = elevenLabsFixture('speech.mp3');
    return { status: 200, headers: { 'content-type': CONTENT_TYPE[format.split('_')[0]] ?? 'application/octet-stream' }, chunks: [audio.subarray(0, 5), audio.subarray(5)] };
  },
  checkAuth(request, credential) {
    const problems: string[] = [];
    if (request.headers['xi-api-key'] !== credential) problems.push('expected "xi-api-key: <key>"');
    if (request.headers.authorization?.includes(credential)) problems.push('the key must not also travel in authorization');
    return problems;
  },
  roles: () => [],
  stopSequences: () => [],
};
