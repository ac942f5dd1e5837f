import type { GuardrailParameters } from '../spec/guardrail.js';
import type { OperationName } from '../spec/unified.js';

/**
 * The request field that holds the text of operations other than chat: a string or an array of
 * strings (a text completion's `prompt`, an embedding's `input`, speech's `input`, an image
 * prompt). Token ids (arrays of numbers) have no text to judge and are left as they are.
 */
export const TEXT_FIELDS: Partial<Record<OperationName, string>> = {
  completion: 'prompt',
  embed: 'input',
  rerank: 'query',
  speech: 'input',
  imageGenerate: 'prompt',
};

export function fieldTexts(body: Record<string, unknown>, field: string): string[] {
  const value = body[field];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((item: unknown) => typeof item === 'string')) return [...(value as string[])];
  return [];
}

/** The token cap a request asks for (`max_tokens`), when it has one. */
export function fieldParameters(body: Record<string, unknown>): GuardrailParameters {
  return typeof body.max_tokens === 'number' ? { maxTokens: body.max_tokens } : {};
}

/** A copy of the body with the rewritten texts (in the form the client sent) and token cap. */
export function rewriteField<Body extends Record<string, unknown>>(body: Body, field: string, texts: readonly string[], parameters: GuardrailParameters): Body {
  const rewritten: Record<string, unknown> = { ...body };
  if (typeof body[field] === 'string') rewritten[field] = texts[0];
  else if (texts.length > 0) rewritten[field] = [...texts];
  if (parameters.maxTokens !== undefined) rewritten.max_tokens = parameters.maxTokens;
  return rewritten as Body;
}
