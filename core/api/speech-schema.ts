import type { SpeechRequest } from '../spec/unified.js';
import { characterCount, invalid, optionalEnum, optionalNumber, requireString } from './validate.js';

/** The speech models and voices of the API spec; a provider plugin may declare more of its own. */
export const SPEECH_MODELS = ['tts-1', 'tts-1-hd'];
export const SPEECH_VOICES = ['alloy', 'echo', 'fable', 'onyx', 'nova', 'shimmer'];
export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'];
const MAX_INPUT = 4096;

/**
 * Validates a speech request's provider-independent bounds. `model` and `voice` are checked
 * against the spec's lists plus the provider's own in {@link checkSpeechModelAndVoice}, once the
 * provider is known (still before anything is sent).
 */
export function validateSpeechRequest(body: Record<string, unknown>): SpeechRequest {
  if (body.model === undefined) throw invalid('is required.', { param: 'model' });
  requireString(body.model, 'model', { nonEmpty: true });
  if (body.input === undefined) throw invalid('is required.', { param: 'input' });
  const input = requireString(body.input, 'input', { nonEmpty: true });
  const characters = characterCount(input);
  if (characters > MAX_INPUT) throw invalid(`must be at most ${MAX_INPUT} characters, got ${characters}.`, { param: 'input' });
  if (body.voice === undefined) throw invalid('is required.', { param: 'voice' });
  requireString(body.voice, 'voice', { nonEmpty: true });
  optionalEnum(body.response_format, 'response_format', SPEECH_FORMATS);
  optionalNumber(body.speed, 'speed', { min: 0.25, max: 4 });
  return body as SpeechRequest;
}

/** `model` and `voice` against the spec's lists plus those the provider declares. */
export function checkSpeechModelAndVoice(request: SpeechRequest, extra: { models?: readonly string[]; voices?: readonly string[] | '*' }): void {
  optionalEnum(request.model, 'model', [...SPEECH_MODELS, ...(extra.models ?? [])]);
  // '*': the provider's voices are account-specific ids; it judges them itself.
  if (extra.voices !== '*') optionalEnum(request.voice, 'voice', [...SPEECH_VOICES, ...(extra.voices ?? [])]);
}
