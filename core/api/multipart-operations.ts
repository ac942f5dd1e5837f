import { spoolMultipart } from '../http/multipart.js';
import { endToEndHeaders } from '../http/headers.js';
import type { GatewayResponse, TransformSlice } from '../pipeline/context.js';
import type { MultipartAdapter, ProviderOperations } from '../spec/provider.js';
import type { FormFile, ImageResponse, MultipartForm } from '../spec/unified.js';
import { recordImageUsage, strictImageResponse } from './images-generate.js';
import { IMAGE_MODEL_A } from './images-generate-schema.js';
import { respondWithJson } from './json-response.js';
import { type OperationHandler, readWholeAnswer, unsupportedOperation } from './operation.js';
import { readPngInfo } from './png.js';
import { invalid } from './validate.js';

type MultipartOperation = 'imageEdit' | 'imageVariation' | 'transcription' | 'translation';

/** Images must be under 4 MB. */
export const IMAGE_LIMIT_BYTES = 4 * 1024 * 1024;
const IMAGE_SIZES = ['256x256', '512x512', '1024x1024'];
const RESPONSE_FORMATS = ['url', 'b64_json'];
const AUDIO_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'];
/** An image and a mask under 4 MB each, plus room for the text fields. */
const IMAGE_BODY_LIMIT = 2 * IMAGE_LIMIT_BYTES + 1024 * 1024;

const fileOf = (form: MultipartForm, field: string): FormFile | undefined => form.files.find((file) => file.field === field);

function noUnexpectedFiles(form: MultipartForm, allowed: readonly string[]): void {
  const stray = form.files.find((file) => !allowed.includes(file.field));
  if (stray) throw invalid(`this operation takes no file in "${stray.field}" (files go in ${allowed.join(' or ')}).`, { param: stray.field });
}

function integerField(form: MultipartForm, name: string, min: number, max: number): void {
  const value = form.fields[name];
  if (value === undefined) return;
  if (!/^-?\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    throw invalid(`expected an integer from ${min} to ${max}, got "${value.slice(0, 40)}".`, { param: name });
  }
}

function numberField(form: MultipartForm, name: string, min: number, max: number): void {
  const value = form.fields[name];
  if (value === undefined) return;
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number < min || number > max) {
    throw invalid(`expected a number from ${min} to ${max}, got "${value.slice(0, 40)}".`, { param: name });
  }
}

function enumField(form: MultipartForm, name: string, allowed: readonly string[]): void {
  const value = form.fields[name];
  if (value !== undefined && !allowed.includes(value)) throw invalid(`expected one of ${allowed.join(', ')}, got "${value.slice(0, 40)}".`, { param: name });
}

function requiredField(form: MultipartForm, name: string, max?: number): void {
  const value = form.fields[name];
  if (value === undefined || value.length === 0) throw invalid('is required.', { param: name });
  if (max !== undefined && value.length > max) throw invalid(`must be at most ${max} characters, got ${value.length}.`, { param: name });
}

/** A PNG file under 4 MB, square: checked from its bytes, not its name. */
async function squarePng(file: FormFile | undefined, field: string) {
  if (!file) throw invalid('a PNG file is required.', { param: field });
  if (file.size >= IMAGE_LIMIT_BYTES) throw invalid(`must be under 4 MB (${IMAGE_LIMIT_BYTES} bytes), got ${file.size} bytes.`, { param: field });
  const info = await readPngInfo(file.path);
  if (!info) throw invalid('must be a PNG image (its bytes do not start with the PNG signature and header).', { param: field });
  return info;
}

function dallE2Only(form: MultipartForm): void {
  const model = form.fields.model;
  if (model !== undefined && model !== IMAGE_MODEL_A) throw invalid(`only ${IMAGE_MODEL_A} supports this operation, got "${model.slice(0, 40)}".`, { param: 'model' });
}

function imageOptions(form: MultipartForm): void {
  dallE2Only(form);
  integerField(form, 'n', 1, 10);
  enumField(form, 'size', IMAGE_SIZES);
  enumField(form, 'response_format', RESPONSE_FORMATS);
}

async function validateImageEdit(form: MultipartForm): Promise<void> {
  noUnexpectedFiles(form, ['image', 'mask']);
  const image = await squarePng(fileOf(form, 'image'), 'image');
  if (image.width !== image.height) throw invalid(`must be square, got ${image.width}x${image.height}.`, { param: 'image' });
  const maskFile = fileOf(form, 'mask');
  if (maskFile) {
    const mask = await squarePng(maskFile, 'mask');
    if (mask.width !== image.width || mask.height !== image.height) {
      throw invalid(`must have the image's dimensions (${image.width}x${image.height}), got ${mask.width}x${mask.height}.`, { param: 'mask' });
    }
  } else if (!image.hasAlpha) {
    throw invalid('must have an alpha channel (transparent areas mark where to edit) when no mask is sent.', { param: 'image' });
  }
  requiredField(form, 'prompt', 1000);
  imageOptions(form);
}

async function validateImageVariation(form: MultipartForm): Promise<void> {
  noUnexpectedFiles(form, ['image']);
  const image = await squarePng(fileOf(form, 'image'), 'image');
  if (image.width !== image.height) throw invalid(`must be square, got ${image.width}x${image.height}.`, { param: 'image' });
  imageOptions(form);
}

async function validateAudio(form: MultipartForm): Promise<void> {
  noUnexpectedFiles(form, ['file']);
  if (!fileOf(form, 'file')) throw invalid('an audio file is required.', { param: 'file' });
  requiredField(form, 'model');
  enumField(form, 'response_format', AUDIO_FORMATS);
  numberField(form, 'temperature', 0, 1);
}

function multipartOperation(spec: {
  name: MultipartOperation;
  route: string;
  validate: (form: MultipartForm) => Promise<void>;
  defaultModel?: string;
  /** Strict-mode shaping and log accounting of a JSON answer (images). */
  json?: { strict(response: ImageResponse): ImageResponse; record(response: ImageResponse, transform: TransformSlice): void };
  /** Largest body this operation can need; a bigger upload is refused (413) as soon as it passes this. */
  limitBytes?: number;
}): OperationHandler {
  const adapterOf = (operations: ProviderOperations) => operations[spec.name] as MultipartAdapter<unknown> | undefined;
  return {
    name: spec.name,
    mapsErrors: true,

    async parse(request, options) {
      const { form, cleanup } = await spoolMultipart(request, Math.min(options.bodyLimitBytes, spec.limitBytes ?? Number.POSITIVE_INFINITY), options);
      try {
        await spec.validate(form);
      } catch (error) {
        await cleanup();
        throw error;
      }
      return { body: form, model: form.fields.model ?? spec.defaultModel, streaming: false, cleanup };
    },

    toUpstream(context, provider, target) {
      const adapter = adapterOf(provider.operations);
      if (!adapter) throw unsupportedOperation(provider.id, spec.name, spec.route);
      const form = context.request.body as MultipartForm;
      adapter.validate?.(form);
      return adapter.toUpstream(form, target);
    },

    async respond(context, provider, forward): Promise<GatewayResponse> {
      const adapter = adapterOf(provider.operations);
      if (!adapter) throw new Error(`${spec.name} response without adapter`);
      const { fromUpstream } = adapter;
      if (!fromUpstream) {
        // Answers whose format the caller picked (json, text, srt, vtt) are relayed as received. A
        // JSON transcript is small: it is read whole so that the usage it reports reaches the log.
        const headers = endToEndHeaders(forward.headers);
        if (String(forward.headers['content-type'] ?? '').startsWith('application/json') && context.transform) {
          const bytes = await readWholeAnswer(forward, provider.id, context.signal);
          forward.endedAt = performance.now();
          recordAudioUsage(bytes, context.transform);
          return { status: forward.status, headers, body: { bytes } };
        }
        if (context.transform) context.transform.units = { requests: 1 };
        forward.body.once('end', () => {
          forward.endedAt = performance.now();
        });
        return { status: forward.status, headers, body: { stream: forward.body } };
      }
      const form = context.request.body as MultipartForm;
      return respondWithJson(context, provider, forward, {
        map: (body, target) => fromUpstream(body, form, target),
        strict: (response) => (spec.json ? spec.json.strict(response as ImageResponse) : response),
        record: (response, transform) => spec.json?.record(response as ImageResponse, transform),
      });
    },
  };
}

/**
 * Usage a JSON transcript reports: tokens (`input_tokens`/`output_tokens`, the newer transcription
 * models) or a duration in seconds (whisper). Anything else records one request.
 */
function recordAudioUsage(bytes: Buffer, transform: TransformSlice): void {
  let usage: unknown;
  try {
    usage = (JSON.parse(bytes.toString('utf8')) as { usage?: unknown }).usage;
  } catch {
    usage = undefined;
  }
  const reported = (typeof usage === 'object' && usage !== null ? usage : {}) as Record<string, unknown>;
  const { input_tokens: input, output_tokens: output, seconds } = reported;
  if (typeof input === 'number' && typeof output === 'number') {
    const total = typeof reported.total_tokens === 'number' ? reported.total_tokens : input + output;
    transform.usage = { prompt_tokens: input, completion_tokens: output, total_tokens: total };
  }
  transform.units = { requests: 1, ...(typeof seconds === 'number' ? { seconds } : {}) };
}

/** `POST /v1/images/edits` (multipart). */
export const imageEdits = multipartOperation({
  name: 'imageEdit',
  route: 'POST /v1/images/edits',
  validate: validateImageEdit,
  defaultModel: IMAGE_MODEL_A,
  json: { strict: strictImageResponse, record: recordImageUsage },
  limitBytes: IMAGE_BODY_LIMIT,
});

/** `POST /v1/images/variations` (multipart). */
export const imageVariations = multipartOperation({
  name: 'imageVariation',
  route: 'POST /v1/images/variations',
  validate: validateImageVariation,
  defaultModel: IMAGE_MODEL_A,
  json: { strict: strictImageResponse, record: recordImageUsage },
  limitBytes: IMAGE_BODY_LIMIT,
});

/** `POST /v1/audio/transcriptions` (multipart). */
export const audioTranscriptions = multipartOperation({ name: 'transcription', route: 'POST /v1/audio/transcriptions', validate: validateAudio });

/** `POST /v1/audio/translations` (multipart). */
export const audioTranslations = multipartOperation({ name: 'translation', route: 'POST /v1/audio/translations', validate: validateAudio });
