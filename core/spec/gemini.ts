import type { Usage } from './unified.js';

/**
 * The Gemini API's shapes (`generateContent` and its relatives), as the gateway reads them. Fields the
 * gateway does not read are kept as received (a native provider gets them unchanged).
 */

/** One part of a content: text (a thought when `thought`), inline bytes, a file URI, a function call or its response. */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType?: string; data?: string };
  fileData?: { mimeType?: string; fileUri?: string };
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name?: string; response?: unknown };
  [field: string]: unknown;
}

export interface GeminiContent {
  role?: string;
  parts: GeminiPart[];
  [field: string]: unknown;
}

/**
 * `POST /v1beta/models/{model}:generateContent` (and `:streamGenerateContent`), validated. `model` is
 * not in Google's body: the gateway puts the path's model here (so routing, aliases and a provider
 * prefix work as for the other protocols) and a native provider takes it out again (with `stream`).
 */
export interface GeminiRequest {
  model: string;
  /** Set by the gateway on a streamed request: how the client's stream is framed (`alt=sse`, else a JSON array). Never sent upstream. */
  stream?: 'sse' | 'array';
  contents: GeminiContent[];
  systemInstruction?: GeminiContent | string;
  tools?: Array<Record<string, unknown>>;
  toolConfig?: Record<string, unknown>;
  safetySettings?: unknown[];
  generationConfig?: Record<string, unknown>;
  cachedContent?: string;
  [field: string]: unknown;
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  index?: number;
  [field: string]: unknown;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  [field: string]: unknown;
}

/** A `GenerateContentResponse`: the whole answer, or one piece of a stream. */
export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string; [field: string]: unknown };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  [field: string]: unknown;
}

/** `:countTokens`'s answer. */
export interface GeminiTokenCount {
  totalTokens: number;
  [field: string]: unknown;
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/** `usageMetadata` as the unified usage the log and the price table read: thoughts are completion (reasoning) tokens. */
export function unifiedGeminiUsage(usage: GeminiUsageMetadata | undefined): Usage {
  const prompt = count(usage?.promptTokenCount) + count(usage?.toolUsePromptTokenCount);
  const thoughts = count(usage?.thoughtsTokenCount);
  const completion = count(usage?.candidatesTokenCount) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: count(usage?.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

/** Unified usage as `usageMetadata` (the inverse of {@link unifiedGeminiUsage}). */
export function geminiUsageMetadata(usage: Usage | null | undefined): GeminiUsageMetadata {
  const reasoning = count((usage?.completion_tokens_details as { reasoning_tokens?: unknown } | null | undefined)?.reasoning_tokens);
  const prompt = count(usage?.prompt_tokens);
  const completion = count(usage?.completion_tokens);
  const cached = count((usage?.prompt_tokens_details as { cached_tokens?: unknown } | null | undefined)?.cached_tokens);
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, completion - reasoning),
    totalTokenCount: prompt + completion,
    ...(reasoning > 0 ? { thoughtsTokenCount: reasoning } : {}),
    ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
  };
}
