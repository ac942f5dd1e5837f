import { errors, type GatewayError } from '../errors.js';
import { isRecord } from '../spec/is-record.js';

/**
 * Small checks shared by the request schemas. Each throws a 400 whose `param` names the field
 * (`messages[2].content`) and whose message says what was expected, in words a person understands.
 */

/** 400 `invalid_value` for the field `param`: the message names it. The catalogue's order: message, then what it is about. */
export function invalid(message: string, { param }: { param: string }): GatewayError {
  return errors.invalidRequest(`Invalid '${param}': ${message}`, { param, code: 'invalid_value' });
}

export const describe = (value: unknown): string => {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length > 40 ? 'a string' : `"${value}"`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `a${typeof value === 'object' ? 'n' : ''} ${typeof value}`;
};

export function requireObject(value: unknown, param: string): Record<string, unknown> {
  if (!isRecord(value)) throw invalid(`expected an object, got ${describe(value)}.`, { param });
  return value;
}

/** The string at `param`; 400 naming it when it is absent (`is required`), not a string, empty (with `nonEmpty`) or too long. */
export function requireString(value: unknown, param: string, options: { nonEmpty?: boolean; max?: number } = {}): string {
  if (value === undefined) throw invalid('is required.', { param });
  if (typeof value !== 'string') throw invalid(`expected a string, got ${describe(value)}.`, { param });
  if (options.nonEmpty && value.length === 0) throw invalid('must not be empty.', { param });
  if (options.max !== undefined && value.length > options.max) {
    throw invalid(`must be at most ${options.max} characters, got ${value.length}.`, { param });
  }
  return value;
}

export function optionalString(value: unknown, param: string): void {
  if (value !== undefined) requireString(value, param);
}

export function optionalBoolean(value: unknown, param: string, nullable = false): void {
  if (value === undefined || (nullable && value === null)) return;
  if (typeof value !== 'boolean') throw invalid(`expected a boolean${nullable ? ' or null' : ''}, got ${describe(value)}.`, { param });
}

/** A number (or integer) within [min, max]; `undefined` passes, `null` passes when nullable. */
export function optionalNumber(
  value: unknown,
  param: string,
  range: { min?: number; max?: number; integer?: boolean; nullable?: boolean },
): void {
  if (value === undefined || (range.nullable && value === null)) return;
  const kind = range.integer ? 'an integer' : 'a number';
  if (typeof value !== 'number' || !Number.isFinite(value) || (range.integer && !Number.isInteger(value))) {
    throw invalid(`expected ${kind}${range.nullable ? ' or null' : ''}, got ${describe(value)}.`, { param });
  }
  if ((range.min !== undefined && value < range.min) || (range.max !== undefined && value > range.max)) {
    const bounds =
      range.max === undefined ? `at least ${range.min}` : range.min === undefined ? `at most ${range.max}` : `between ${range.min} and ${range.max}`;
    throw invalid(`must be ${bounds}, got ${value}.`, { param });
  }
}

export function optionalEnum(value: unknown, param: string, allowed: readonly string[]): void {
  if (value === undefined) return;
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw invalid(`must be one of ${allowed.map((entry) => `'${entry}'`).join(', ')}, got ${describe(value)}.`, { param });
  }
}

/** Names of functions, tools and JSON schemas: `[a-zA-Z0-9_-]`, 1 to 64 characters. */
export const NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export function requireName(value: unknown, param: string): string {
  const name = requireString(value, param);
  if (!NAME_PATTERN.test(name)) {
    throw invalid('must be 1 to 64 characters of a-z, A-Z, 0-9, underscore or dash.', { param });
  }
  return name;
}

/** Base64 text (standard alphabet, optional padding), at least one character. */
export const BASE64_PATTERN = /^[A-Za-z0-9+/]+={0,2}$/;

/** A base64 data URL, `data:<type>/<subtype>[;parameter…];base64,<data>`: what a `file` part's `file_data` is. */
export const DATA_URL_PATTERN = /^data:[A-Za-z0-9.+-]+\/[A-Za-z0-9.+-]+(?:;[^,;]*)*;base64,[A-Za-z0-9+/]+={0,2}$/;

/** `stop`: null, a string, or an array of 1 to 4 strings. */
export function optionalStop(value: unknown, param: string, allowEmptyArray = false): void {
  if (value === undefined || value === null || typeof value === 'string') return;
  if (!Array.isArray(value)) throw invalid(`expected a string or an array of strings, got ${describe(value)}.`, { param });
  if ((!allowEmptyArray && value.length === 0) || value.length > 4) {
    throw invalid(`must hold 1 to 4 strings, got ${value.length}.`, { param });
  }
  value.forEach((entry, index) => {
    requireString(entry, `${param}[${index}]`);
  });
}

/** `logit_bias`: null or token id → integer in [-100, 100]. */
export function optionalLogitBias(value: unknown, param: string): void {
  if (value === undefined || value === null) return;
  const bias = requireObject(value, param);
  for (const token in bias) {
    if (!/^\d+$/.test(token)) throw invalid('keys must be token ids (non-negative integers).', { param: `${param}.${token}` });
    optionalNumber(bias[token], `${param}.${token}`, { min: -100, max: 100, integer: true });
  }
}

// JSON numbers are doubles: the signed 64-bit bounds are ±2^63, the nearest doubles to them.
const INT64_MIN = -(2 ** 63);
const INT64_MAX = 2 ** 63;

/** `seed`: an integer within the signed 64-bit range, or null. */
export function optionalSeed(value: unknown, param: string): void {
  optionalNumber(value, param, { integer: true, nullable: true, min: INT64_MIN, max: INT64_MAX });
}

/** `stream_options`: null or `{include_usage: boolean}`, and only when `stream` is true. */
export function optionalStreamOptions(value: unknown, stream: unknown, param = 'stream_options'): void {
  if (value === undefined || value === null) return;
  const options = requireObject(value, param);
  if (stream !== true) throw invalid('is only allowed when stream is true.', { param });
  optionalBoolean(options.include_usage, `${param}.include_usage`);
}

/** Characters as a person counts them (Unicode code points, not UTF-16 units). */
export function characterCount(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // A high surrogate followed by a low one is one character.
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
    count++;
  }
  return count;
}
