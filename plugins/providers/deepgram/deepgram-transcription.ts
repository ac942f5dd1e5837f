import { errors, fileBody, isRecord, type MultipartAdapter, type MultipartForm } from '../../../core/spec/index.js';

/** OpenAI's transcription model names, sent as Deepgram's current general model. */
const MODEL_FOR_OPENAI: Readonly<Record<string, string>> = { 'whisper-1': 'nova-3', 'gpt-4o-transcribe': 'nova-3', 'gpt-4o-mini-transcribe': 'nova-3' };
/** The answers Deepgram's JSON can be turned into; `text`, `srt` and `vtt` are refused. */
const FORMATS = new Set(['json', 'verbose_json']);
const MODEL = /^[A-Za-z0-9._-]{1,64}$/;
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/** The `/listen` query for a form (refuses what Deepgram's answer cannot become). */
export function deepgramQuery(form: MultipartForm): URLSearchParams {
  const format = form.fields.response_format ?? 'json';
  if (!FORMATS.has(format)) {
    throw errors.invalidRequest(`Deepgram answers JSON: response_format must be json or verbose_json, got "${format.slice(0, 40)}".`, { param: 'response_format', code: 'invalid_value' });
  }
  const requested = form.fields.model ?? 'whisper-1';
  const model = MODEL_FOR_OPENAI[requested] ?? requested;
  if (!MODEL.test(model)) throw errors.invalidRequest(`"${requested.slice(0, 40)}" is not a Deepgram model name.`, { param: 'model', code: 'invalid_value' });
  const query = new URLSearchParams({ model, smart_format: 'true' });
  const language = form.fields.language;
  if (language !== undefined) {
    if (!LANGUAGE.test(language)) throw errors.invalidRequest(`"${language.slice(0, 40)}" is not a language code.`, { param: 'language', code: 'invalid_value' });
    query.set('language', language);
  } else {
    // OpenAI detects the language when none is given; Deepgram assumes English unless asked.
    query.set('detect_language', 'true');
  }
  return query;
}

interface DeepgramWord {
  word?: string;
  punctuated_word?: string;
  start?: number;
  end?: number;
}

/** Deepgram's answer as OpenAI's `json` (`{text, usage}`) or `verbose_json` (language, duration, words). */
export function fromDeepgram(body: unknown, form: MultipartForm): Record<string, unknown> {
  const results = isRecord(body) && isRecord(body.results) ? body.results : undefined;
  const channel = results && Array.isArray(results.channels) && isRecord(results.channels[0]) ? results.channels[0] : undefined;
  const alternative = channel && Array.isArray(channel.alternatives) && isRecord(channel.alternatives[0]) ? channel.alternatives[0] : undefined;
  if (!alternative || typeof alternative.transcript !== 'string') throw new TypeError('Deepgram answer without results.channels[0].alternatives[0].transcript');
  const metadata = isRecord(body) && isRecord(body.metadata) ? body.metadata : {};
  const seconds = typeof metadata.duration === 'number' ? metadata.duration : undefined;
  const usage = seconds === undefined ? undefined : { type: 'duration', seconds: Math.ceil(seconds) };
  if ((form.fields.response_format ?? 'json') === 'json') return { text: alternative.transcript, ...(usage ? { usage } : {}) };
  const words = Array.isArray(alternative.words)
    ? (alternative.words as DeepgramWord[]).map((word) => ({ word: word.punctuated_word ?? word.word ?? '', start: word.start ?? 0, end: word.end ?? 0 }))
    : [];
  return {
    task: 'transcribe',
    language: typeof channel?.detected_language === 'string' ? channel.detected_language : (form.fields.language ?? 'en'),
    duration: seconds ?? 0,
    text: alternative.transcript,
    words,
    ...(usage ? { usage } : {}),
  };
}

/** `POST /v1/audio/transcriptions` → `POST /v1/listen?model=…` with the audio file as the raw body. */
export const deepgramTranscription: MultipartAdapter<Record<string, unknown>> = {
  validate(form) {
    deepgramQuery(form);
    return undefined;
  },
  toUpstream(form, target) {
    const file = form.files.find((candidate) => candidate.field === 'file');
    if (!file) throw errors.invalidRequest('An audio file is required.', { param: 'file', code: 'missing_required_parameter' });
    const { body, headers } = fileBody(file);
    return { method: 'POST', url: `${target.baseUrl}/listen?${deepgramQuery(form).toString()}`, headers, body };
  },
  fromUpstream: fromDeepgram,
};
