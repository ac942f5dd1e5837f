import { errors, type GatewayError } from '../errors.js';
import { isRecord } from './is-record.js';

/**
 * Chat content parts beyond `text` and `image_url` (issue 17): `file` (`{file: {file_data?,
 * file_id?, filename?}}`, a PDF or other document) and `input_audio` (`{input_audio: {data,
 * format}}`). Only user messages carry them. Providers differ in what they take, so each declares
 * it (`capabilities.contentParts`) and the core refuses the rest before anything is sent, with one
 * error naming the provider and the part.
 */

/** The content part types a provider must declare to receive. */
export type ExtraContentPartType = 'file' | 'input_audio';

/** What a provider takes of the {@link ExtraContentPartType} parts, for one model. */
export interface ContentPartSupport {
  /**
   * `file` parts: the media types of `file_data` taken (`'*'`: any, the upstream judges), and whether
   * `file_id` (an id in OpenAI's file store) is understood. Absent: file parts are refused.
   */
  readonly file?: { readonly mediaTypes: readonly string[] | '*'; readonly fileId: boolean };
  /** `input_audio` parts: true when taken (formats `wav`, `mp3`). */
  readonly inputAudio?: boolean;
}

/** What OpenAI's own API takes, and so every provider that forwards the parts unchanged. */
export const OPENAI_CONTENT_PARTS: ContentPartSupport = { file: { mediaTypes: '*', fileId: true }, inputAudio: true };

/** `data:application/pdf;base64,AAAA` → media type (lower case) and base64 data; undefined when not a base64 data URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+)(?:;[^,;]*)*;base64,(.*)$/is.exec(url);
  return match ? { mediaType: match[1].toLowerCase(), data: match[2] } : undefined;
}

/** A `file` part, read: its inline data (parsed data URL), or the OpenAI file id, and the file name. */
export interface FilePart {
  readonly inline?: { mediaType: string; data: string };
  readonly fileId?: string;
  readonly filename?: string;
}

/** Reads a validated `file` part (`{type: 'file', file: {...}}`). */
export function readFilePart(part: Record<string, unknown>): FilePart {
  const file = isRecord(part.file) ? part.file : {};
  const inline = typeof file.file_data === 'string' ? parseDataUrl(file.file_data) : undefined;
  return {
    ...(inline ? { inline } : {}),
    ...(typeof file.file_id === 'string' ? { fileId: file.file_id } : {}),
    ...(typeof file.filename === 'string' ? { filename: file.filename } : {}),
  };
}

/** Audio media types of `input_audio.format`, as Google's APIs name them. */
export const AUDIO_MEDIA_TYPES: Readonly<Record<string, string>> = { wav: 'audio/wav', mp3: 'audio/mp3' };

/**
 * The refusal of a content part a provider cannot take: 400 `unsupported_content_part` whose
 * `param` is the part (`messages[0].content[1]`) and whose message names the provider and the part
 * type, with `detail` saying why when the type itself is taken (a file id, a media type).
 */
export function unsupportedContentPart(provider: string, partType: string, param: string, detail?: string): GatewayError {
  const message = detail
    ? `The provider "${provider}" does not accept this "${partType}" content part: ${detail}.`
    : `The provider "${provider}" does not accept "${partType}" content parts in chat messages.`;
  return errors.invalidRequest(message, {
    param,
    code: 'unsupported_content_part',
  });
}

/**
 * The first part of `messages` the provider's declared support refuses, as the error to answer
 * with; undefined when it takes them all. Checked by the core before a provider maps a request.
 */
export function refusedContentPart(messages: readonly { role: string; content?: unknown }[], provider: string, support: ContentPartSupport): GatewayError | undefined {
  for (const [messageIndex, message] of messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    for (const [partIndex, part] of (message.content as unknown[]).entries()) {
      if (!isRecord(part)) continue;
      const param = `messages[${messageIndex}].content[${partIndex}]`;
      if (part.type === 'input_audio' && !support.inputAudio) return unsupportedContentPart(provider, 'input_audio', param);
      if (part.type !== 'file') continue;
      if (!support.file) return unsupportedContentPart(provider, 'file', param);
      const file = readFilePart(part);
      if (!file.inline) {
        if (!support.file.fileId) {
          return unsupportedContentPart(provider, 'file', param, 'file_id names a file in OpenAI\'s file store, which this provider cannot read; send the file inline as file_data');
        }
        continue;
      }
      const { mediaTypes } = support.file;
      if (mediaTypes !== '*' && !mediaTypes.includes(file.inline.mediaType)) {
        return unsupportedContentPart(provider, 'file', param, `file_data of type "${file.inline.mediaType}" is not taken (it takes ${mediaTypes.join(', ')})`);
      }
    }
  }
  return undefined;
}
