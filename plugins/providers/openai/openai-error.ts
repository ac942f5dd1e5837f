import type { ErrorBody, UpstreamReply } from '../../../core/spec/index.js';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
};

const asString = (value: unknown): string | null => (typeof value === 'string' ? value : value == null ? null : String(value));

/**
 * OpenAI error bodies are already `{"error": {message, type, param, code}}`; anything else (an HTML
 * page from a proxy, an empty body) gets a message naming the status and a type chosen by status.
 */
export function mapOpenAIError(reply: UpstreamReply): ErrorBody {
  const text = Buffer.from(reply.body).toString('utf8');
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    const error = parsed.error;
    if (error && typeof error === 'object') {
      const fields = error as Record<string, unknown>;
      return {
        message: asString(fields.message) ?? `The provider returned HTTP ${reply.status}.`,
        type: asString(fields.type) ?? TYPE_BY_STATUS[reply.status] ?? 'api_error',
        param: asString(fields.param),
        code: asString(fields.code),
      };
    }
    if (typeof error === 'string') {
      return { message: error, type: TYPE_BY_STATUS[reply.status] ?? 'api_error', param: null, code: null };
    }
  } catch {
    // not JSON: described below
  }
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return {
    message: `The provider returned HTTP ${reply.status}${snippet ? `: ${snippet}` : '.'}`,
    type: TYPE_BY_STATUS[reply.status] ?? 'api_error',
    param: null,
    code: null,
  };
}
