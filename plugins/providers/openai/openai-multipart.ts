import { encodeMultipart, type ImageResponse, type MultipartAdapter } from '../../../core/spec/index.js';

/** A multipart operation OpenAI takes as the unified API sends it: the form re-encoded, files byte for byte. */
function forwarded<Response>(path: string, fromUpstream?: (body: unknown) => Response): MultipartAdapter<Response> {
  return {
    toUpstream(form, target) {
      const { body, headers } = encodeMultipart(form);
      return { method: 'POST', url: `${target.baseUrl}${path}`, headers, body };
    },
    ...(fromUpstream ? { fromUpstream } : {}),
  };
}

const images = (body: unknown): ImageResponse => {
  const response = body as ImageResponse;
  if (typeof response !== 'object' || response === null || !Array.isArray(response.data)) throw new TypeError('OpenAI image response without data');
  return response;
};

export const openAIImageEdit = forwarded('/images/edits', images);
export const openAIImageVariation = forwarded('/images/variations', images);
/** Transcripts come back in the format the caller chose (json, text, srt, vtt): relayed as received. */
export const openAITranscription = forwarded<unknown>('/audio/transcriptions');
export const openAITranslation = forwarded<unknown>('/audio/translations');
