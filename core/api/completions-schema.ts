import type { CompletionRequest } from '../spec/unified.js';
import {
  describe,
  invalid,
  optionalBoolean,
  optionalLogitBias,
  optionalNumber,
  optionalSeed,
  optionalStop,
  optionalStreamOptions,
  optionalString,
  requireString,
} from './validate.js';

/** Token ids are non-negative integers. */
export function requireTokenIds(value: unknown[], param: string): void {
  for (let index = 0; index < value.length; index++) {
    const token = value[index];
    if (typeof token !== 'number' || !Number.isInteger(token) || token < 0) {
      throw invalid(`expected a token id (a non-negative integer), got ${describe(token)}.`, { param: `${param}[${index}]` });
    }
  }
}

/**
 * A string, an array of strings, an array of token ids or an array of token-id arrays (the shape
 * `prompt` and embedding `input` share). Arrays are not empty and not mixed.
 */
export function validateTextOrTokens(value: unknown, param: string): void {
  if (typeof value === 'string') return;
  if (!Array.isArray(value)) {
    throw invalid(`expected a string, an array of strings, an array of token ids or an array of token-id arrays, got ${describe(value)}.`, { param });
  }
  if (value.length === 0) throw invalid('must not be an empty array.', { param });
  const first = value[0];
  if (typeof first === 'string') {
    value.forEach((entry, index) => requireString(entry, `${param}[${index}]`));
  } else if (typeof first === 'number') {
    requireTokenIds(value, param);
  } else if (Array.isArray(first)) {
    value.forEach((entry, index) => {
      const at = `${param}[${index}]`;
      if (!Array.isArray(entry)) throw invalid(`expected an array of token ids, got ${describe(entry)}.`, { param: at });
      if (entry.length === 0) throw invalid('must not be an empty array.', { param: at });
      requireTokenIds(entry, at);
    });
  } else {
    throw invalid(`expected a string, a token id or an array of token ids, got ${describe(first)}.`, { param: `${param}[0]` });
  }
}

/**
 * Validates a text completion request against every bound of the API spec. Unknown top-level
 * fields are kept. Throws a 400 naming the first bad field.
 */
export function validateCompletionRequest(body: Record<string, unknown>): CompletionRequest {
  requireString(body.model, 'model', { nonEmpty: true });
  if (body.prompt !== undefined && body.prompt !== null) validateTextOrTokens(body.prompt, 'prompt');
  optionalNumber(body.n, 'n', { min: 1, max: 128, integer: true, nullable: true });
  optionalNumber(body.best_of, 'best_of', { min: 0, max: 20, integer: true, nullable: true });
  const bestOf = body.best_of;
  if (typeof bestOf === 'number') {
    if (typeof body.n === 'number' && bestOf <= body.n) throw invalid(`must be greater than n (${body.n}), got ${bestOf}.`, { param: 'best_of' });
    if (body.stream === true) throw invalid('cannot be used with stream: true.', { param: 'best_of' });
  }
  optionalBoolean(body.echo, 'echo', true);
  optionalNumber(body.frequency_penalty, 'frequency_penalty', { min: -2, max: 2, nullable: true });
  optionalNumber(body.presence_penalty, 'presence_penalty', { min: -2, max: 2, nullable: true });
  optionalLogitBias(body.logit_bias, 'logit_bias');
  optionalNumber(body.logprobs, 'logprobs', { min: 0, max: 5, integer: true, nullable: true });
  optionalNumber(body.max_tokens, 'max_tokens', { min: 0, integer: true, nullable: true });
  optionalSeed(body.seed, 'seed');
  optionalStop(body.stop, 'stop');
  optionalBoolean(body.stream, 'stream', true);
  optionalStreamOptions(body.stream_options, body.stream);
  if (body.suffix !== null) optionalString(body.suffix, 'suffix');
  optionalNumber(body.temperature, 'temperature', { min: 0, max: 2, nullable: true });
  optionalNumber(body.top_p, 'top_p', { min: 0, max: 1, nullable: true });
  optionalString(body.user, 'user');
  return body as CompletionRequest;
}
