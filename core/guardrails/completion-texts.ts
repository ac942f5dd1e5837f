import type { GuardrailParameters } from '../spec/guardrail.js';
import type { CompletionRequest } from '../spec/unified.js';

/**
 * The texts of a text completion request: its `prompt`, a string or an array of strings. A prompt
 * of token ids (an array of numbers, or of such arrays) has no text to judge and is left as it is.
 */
export function promptTexts(request: CompletionRequest): string[] {
  const { prompt } = request;
  if (typeof prompt === 'string') return [prompt];
  if (Array.isArray(prompt) && prompt.every((item: unknown) => typeof item === 'string')) return [...(prompt as string[])];
  return [];
}

export function promptParameters(request: CompletionRequest): GuardrailParameters {
  return typeof request.max_tokens === 'number' ? { maxTokens: request.max_tokens } : {};
}

/** A copy of the request with the rewritten prompt (in the form the client sent) and token cap. */
export function rewritePrompt(request: CompletionRequest, texts: readonly string[], parameters: GuardrailParameters): CompletionRequest {
  const rewritten: CompletionRequest = { ...request };
  if (typeof request.prompt === 'string') rewritten.prompt = texts[0];
  else if (texts.length > 0) rewritten.prompt = [...texts];
  if (parameters.maxTokens !== undefined) rewritten.max_tokens = parameters.maxTokens;
  return rewritten;
}
