import { errors, type SpeechAdapter, type SpeechRequest } from '../../../core/spec/index.js';

/** ElevenLabs' text-to-speech models (a request naming another is refused by ElevenLabs, not here). */
export const ELEVENLABS_MODELS = [
  'eleven_v3',
  'eleven_multilingual_v2',
  'eleven_flash_v2_5',
  'eleven_turbo_v2_5',
  'eleven_flash_v2',
  'eleven_turbo_v2',
  'eleven_monolingual_v1',
  'eleven_multilingual_v1',
];

/** OpenAI's model names, sent as the ElevenLabs model of the same trade-off (fast / high quality). */
const MODEL_FOR_OPENAI: Readonly<Record<string, string>> = { 'tts-1': 'eleven_flash_v2_5', 'tts-1-hd': 'eleven_multilingual_v2' };

/** OpenAI's `response_format` as ElevenLabs' `output_format` (`pcm`: 16-bit little-endian at 24 kHz, as OpenAI's). */
const OUTPUT_FORMAT: Readonly<Record<string, string>> = { mp3: 'mp3_44100_128', opus: 'opus_48000_128', pcm: 'pcm_24000' };

/** OpenAI's six voice names: not ElevenLabs voices (those are ids). */
const OPENAI_VOICES = new Set(['alloy', 'echo', 'fable', 'onyx', 'nova', 'shimmer']);

/** ElevenLabs voice ids: letters and digits (checked so the id cannot leave its path segment). */
const VOICE_ID = /^[A-Za-z0-9]{1,64}$/;

/** The body and query ElevenLabs takes for a unified speech request (refuses what it cannot carry). */
export function toElevenLabs(request: SpeechRequest): { voiceId: string; outputFormat: string; body: Record<string, unknown> } {
  if (OPENAI_VOICES.has(request.voice) || !VOICE_ID.test(request.voice)) {
    throw errors.invalidRequest(`ElevenLabs takes a voice id (e.g. "JBFqnCBsd6RMkjVDRZzb"), not "${request.voice.slice(0, 64)}".`, { param: 'voice', code: 'invalid_value' });
  }
  const format = request.response_format ?? 'mp3';
  const outputFormat = OUTPUT_FORMAT[format];
  if (!outputFormat) {
    throw errors.invalidRequest(`ElevenLabs has no "${format}" output: use mp3, opus or pcm.`, { param: 'response_format', code: 'invalid_value' });
  }
  const body: Record<string, unknown> = { text: request.input, model_id: MODEL_FOR_OPENAI[request.model] ?? request.model };
  if (request.speed !== undefined) body.voice_settings = { speed: request.speed };
  return { voiceId: request.voice, outputFormat, body };
}

/** `POST /v1/text-to-speech/<voice id>?output_format=…`: the audio is relayed by the core as it arrives. */
export const elevenLabsSpeech: SpeechAdapter = {
  toUpstream(request, target) {
    const { voiceId, outputFormat, body } = toElevenLabs(request);
    return {
      method: 'POST',
      url: `${target.baseUrl}/text-to-speech/${voiceId}?output_format=${outputFormat}`,
      headers: { 'content-type': 'application/json', accept: 'audio/*' },
      body: JSON.stringify(body),
    };
  },
  models: ELEVENLABS_MODELS,
  voices: '*',
};
