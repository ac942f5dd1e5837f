import { canonicalPath, rawPathOf } from '../../../http/request-path.js';
import type { OperationHandler } from '../../operation.js';
import { geminiCountTokens, geminiEmbed, geminiModels, generateContent } from './handler.js';
import { geminiModelPath } from './schema.js';

/** The Gemini API's operations, each served on `/v1beta/models/{model}:{method}` (and `/v1/…`), and the model list. */
export const GEMINI_OPERATIONS: readonly OperationHandler[] = [generateContent, geminiCountTokens, geminiEmbed, geminiModels];

const BY_METHOD: Readonly<Record<string, OperationHandler>> = {
  generateContent,
  streamGenerateContent: generateContent,
  countTokens: geminiCountTokens,
  embedContent: geminiEmbed,
  batchEmbedContents: geminiEmbed,
};

/**
 * The Gemini operation a request is for (`POST /v1beta/models/{model}:{method}`, `GET /v1beta/models`,
 * and the same under `/v1/`), or undefined. `requestTarget` is the request's path and query as sent.
 */
export function geminiOperationOf(method: string, requestTarget: string): OperationHandler | undefined {
  const raw = rawPathOf(requestTarget);
  if (method === 'GET') return raw === '/v1beta/models' ? geminiModels : undefined;
  if (method !== 'POST' || !(raw.startsWith('/v1beta/models/') || raw.startsWith('/v1/models/'))) return undefined;
  let path: string;
  try {
    path = canonicalPath(raw);
  } catch {
    return undefined;
  }
  const found = geminiModelPath(path);
  return found ? BY_METHOD[found.method] : undefined;
}

/**
 * The query string without Google's `key` parameter, and that key. The Gemini API takes the API key
 * as `?key=`; the gateway takes its own key there too, but moves it to the `x-goog-api-key` header
 * before anything reads the request, so the value is never in a recorded path or URL (the log entry,
 * the upstream URL) and is checked, and throttled on failure, like any key header.
 */
export function withoutKey(query: string): { query: string; key?: string } {
  if (!query || !/(?:^|&)key=/.test(query)) return { query };
  const params = new URLSearchParams(query);
  const key = params.get('key') ?? undefined;
  params.delete('key');
  return { query: params.toString(), ...(key ? { key } : {}) };
}
