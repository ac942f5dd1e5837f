import { errors } from '../../../errors.js';
import type { GeminiContent, GeminiRequest } from '../../../spec/gemini.js';
import { describe, invalid, optionalNumber, requireObject } from '../../validate.js';

/** The methods of a model the gateway serves on the Gemini API's routes. */
export type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'countTokens' | 'embedContent' | 'batchEmbedContents';

const METHODS: readonly GeminiMethod[] = ['generateContent', 'streamGenerateContent', 'countTokens', 'embedContent', 'batchEmbedContents'];

/**
 * `/v1beta/models/{model}:{method}` (or `/v1/…`), the path as routed (canonical): the model (without
 * `models/`; it may hold slashes, a provider prefix written as path segments) and the method.
 * Undefined for any other path.
 */
export function geminiModelPath(path: string): { model: string; method: GeminiMethod } | undefined {
  // String operations, not a regular expression: this runs twice on every request of these routes.
  const prefix = path.startsWith('/v1beta/models/') ? 15 : path.startsWith('/v1/models/') ? 11 : 0;
  const colon = path.indexOf(':', prefix);
  if (prefix === 0 || colon <= prefix || path.indexOf(':', colon + 1) !== -1) return undefined;
  const method = path.slice(colon + 1);
  if (!(METHODS as readonly string[]).includes(method)) return undefined;
  let model: string;
  try {
    model = decodeURIComponent(path.slice(prefix, colon));
  } catch {
    return undefined;
  }
  return model ? { model, method: method as GeminiMethod } : undefined;
}

/** The model a `models/x` resource name (in a batch's requests, a countTokens' inner request) names. */
export const modelOfResource = (name: string): string => name.replace(/^models\//, '');

function requireArray(value: unknown, param: string): unknown[] {
  if (value === undefined) throw invalid('is required.', { param });
  if (!Array.isArray(value)) throw invalid(`expected an array, got ${describe(value)}.`, { param });
  return value;
}

function optionalObject(value: unknown, param: string): void {
  if (value !== undefined && value !== null) requireObject(value, param);
}

/** One content: its parts, each an object (what a part holds is read by the translation, or by Google). */
export function validateContent(value: unknown, param: string): GeminiContent {
  const content = requireObject(value, param);
  if (content.role !== undefined && typeof content.role !== 'string') throw invalid(`expected a string, got ${describe(content.role)}.`, { param: `${param}.role` });
  const parts = requireArray(content.parts, `${param}.parts`);
  parts.forEach((part, index) => {
    const at = `${param}.parts[${index}]`;
    const record = requireObject(part, at);
    if (record.text !== undefined && typeof record.text !== 'string') throw invalid(`expected a string, got ${describe(record.text)}.`, { param: `${at}.text` });
    optionalObject(record.inlineData, `${at}.inlineData`);
    optionalObject(record.fileData, `${at}.fileData`);
    optionalObject(record.functionCall, `${at}.functionCall`);
    optionalObject(record.functionResponse, `${at}.functionResponse`);
  });
  return content as GeminiContent;
}

/**
 * Validates a `generateContent` body (the same for the stream) and puts the path's model in it.
 * Fields the gateway does not read are kept as sent; only the JSON types of those it reads are checked.
 */
export function validateGenerateContent(body: Record<string, unknown>, model: string, param = ''): GeminiRequest {
  const at = (field: string) => (param ? `${param}.${field}` : field);
  const contents = requireArray(body.contents, at('contents'));
  if (contents.length === 0) throw invalid('must hold at least one content.', { param: at('contents') });
  contents.forEach((content, index) => validateContent(content, `${at('contents')}[${index}]`));
  if (body.systemInstruction !== undefined && typeof body.systemInstruction !== 'string') validateContent(body.systemInstruction, at('systemInstruction'));
  if (body.tools !== undefined) requireArray(body.tools, at('tools')).forEach((tool, index) => requireObject(tool, `${at('tools')}[${index}]`));
  optionalObject(body.toolConfig, at('toolConfig'));
  if (body.safetySettings !== undefined) requireArray(body.safetySettings, at('safetySettings'));
  optionalObject(body.generationConfig, at('generationConfig'));
  const config = (body.generationConfig ?? {}) as Record<string, unknown>;
  const field = (name: string) => at(`generationConfig.${name}`);
  optionalNumber(config.temperature, field('temperature'), { min: 0, max: 2 });
  optionalNumber(config.topP, field('topP'), { min: 0, max: 1 });
  optionalNumber(config.topK, field('topK'), { min: 1, integer: true });
  optionalNumber(config.maxOutputTokens, field('maxOutputTokens'), { min: 1, integer: true });
  optionalNumber(config.candidateCount, field('candidateCount'), { min: 1, max: 8, integer: true });
  if (config.stopSequences !== undefined) {
    const stops = requireArray(config.stopSequences, field('stopSequences'));
    if (stops.length > 5 || stops.some((stop) => typeof stop !== 'string')) throw invalid('expected at most 5 strings.', { param: field('stopSequences') });
  }
  optionalObject(config.thinkingConfig, field('thinkingConfig'));
  optionalObject(config.responseSchema, field('responseSchema'));
  if (body.cachedContent !== undefined && typeof body.cachedContent !== 'string') throw invalid(`expected a string, got ${describe(body.cachedContent)}.`, { param: at('cachedContent') });
  return { ...body, model } as GeminiRequest;
}

/** `:countTokens`: `contents`, or a whole `generateContentRequest`; the request to count as a generateContent body. */
export function validateCountTokens(body: Record<string, unknown>, model: string): GeminiRequest {
  if (body.generateContentRequest !== undefined) {
    const inner = requireObject(body.generateContentRequest, 'generateContentRequest');
    const { model: _model, ...rest } = inner;
    return validateGenerateContent(rest, model, 'generateContentRequest');
  }
  return validateGenerateContent(body, model);
}

/** `:embedContent`'s body, or one of `:batchEmbedContents`' requests. */
export interface GeminiEmbedRequest {
  model?: string;
  content: GeminiContent;
  taskType?: string;
  title?: string;
  outputDimensionality?: number;
  [field: string]: unknown;
}

/** `:embedContent` and `:batchEmbedContents` bodies as a list of requests (one for embedContent), the path's model put in. */
export function validateEmbed(body: Record<string, unknown>, model: string, batch: boolean): { model: string; requests: GeminiEmbedRequest[]; batch: boolean } {
  const raw = batch ? requireArray(body.requests, 'requests') : [body];
  if (raw.length === 0) throw invalid('must hold at least one request.', { param: 'requests' });
  const requests = raw.map((entry, index) => {
    const param = batch ? `requests[${index}]` : '';
    const at = (field: string) => (param ? `${param}.${field}` : field);
    const request = requireObject(entry, param || 'body');
    validateContent(request.content, at('content'));
    optionalNumber(request.outputDimensionality, at('outputDimensionality'), { min: 1, integer: true });
    if (request.model !== undefined && (typeof request.model !== 'string' || modelOfResource(request.model) !== model)) {
      throw errors.invalidRequest(`Invalid '${at('model')}': every request of a batch must name the path's model ("models/${model}").`, { param: at('model'), code: 'invalid_value' });
    }
    return request as GeminiEmbedRequest;
  });
  return { model, requests, batch };
}
