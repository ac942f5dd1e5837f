import { BASE64_PATTERN, DATA_URL_PATTERN, invalid, optionalEnum, optionalString, requireObject, requireString } from './validate.js';

/** `input_audio.format` values of OpenAI's chat schema. */
export const INPUT_AUDIO_FORMATS = ['wav', 'mp3'] as const;

/** `{type: 'file', file: {file_data?, file_id?, filename?}}`: one of file_data (a base64 data URL) and file_id. */
function validateFile(value: unknown, param: string): void {
  const file = requireObject(value, param);
  optionalString(file.filename, `${param}.filename`);
  if (file.file_id !== undefined) requireString(file.file_id, `${param}.file_id`, { nonEmpty: true });
  if (file.file_data !== undefined) {
    const data = requireString(file.file_data, `${param}.file_data`, { nonEmpty: true });
    if (!DATA_URL_PATTERN.test(data)) {
      throw invalid('expected a base64 data URL with the file\'s media type, such as "data:application/pdf;base64,JVBERi0x...".', { param: `${param}.file_data` });
    }
  }
  if (file.file_data === undefined && file.file_id === undefined) throw invalid('needs file_data or file_id.', { param });
}

/** `{type: 'input_audio', input_audio: {data, format}}`: base64 audio (no data URL prefix) in a format of the schema. */
function validateInputAudio(value: unknown, param: string): void {
  const audio = requireObject(value, param);
  const data = requireString(audio.data, `${param}.data`, { nonEmpty: true });
  if (!BASE64_PATTERN.test(data)) throw invalid('expected base64 audio data (without a data: prefix).', { param: `${param}.data` });
  if (audio.format === undefined) throw invalid('is required.', { param: `${param}.format` });
  optionalEnum(audio.format, `${param}.format`, INPUT_AUDIO_FORMATS);
}

/** Checks each content part of `content` (an array) against the part types `allowed` for its message's role. */
export function validateContentParts(content: unknown[], param: string, allowed: readonly string[]): void {
  content.forEach((part, index) => {
    const at = `${param}[${index}]`;
    const entry = requireObject(part, at);
    optionalEnum(entry.type, `${at}.type`, allowed);
    if (entry.type === undefined) throw invalid('is required.', { param: `${at}.type` });
    if (entry.type === 'text') requireString(entry.text, `${at}.text`);
    else if (entry.type === 'refusal') requireString(entry.refusal, `${at}.refusal`);
    else if (entry.type === 'image_url') {
      const image = requireObject(entry.image_url, `${at}.image_url`);
      requireString(image.url, `${at}.image_url.url`, { nonEmpty: true });
      optionalEnum(image.detail, `${at}.image_url.detail`, ['auto', 'low', 'high']);
    } else if (entry.type === 'file') validateFile(entry.file, `${at}.file`);
    else if (entry.type === 'input_audio') validateInputAudio(entry.input_audio, `${at}.input_audio`);
  });
}
