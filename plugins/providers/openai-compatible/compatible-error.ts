import { type ErrorBody, errorTypeForStatus, type UpstreamReply } from '../../../core/spec/index.js';

const asString = (value: unknown): string | null => (typeof value === 'string' ? value : value == null ? null : String(value));
const byStatus = (status: number) => errorTypeForStatus(status);

/** FastAPI-style `detail`: a string, or a list of `{msg, loc}` problems. */
function detailMessage(detail: unknown): string | null {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    const messages = detail.map((item) => (typeof item === 'object' && item !== null ? asString((item as Record<string, unknown>).msg) : asString(item)));
    const joined = messages.filter(Boolean).join('; ');
    return joined || null;
  }
  return null;
}

/**
 * Error bodies of OpenAI-compatible servers: OpenAI's `{"error": {message, type, param, code}}`,
 * `{"error": "text"}`, a top-level `{message, type, code}` (vLLM, Mistral) or FastAPI's `{"detail": …}`;
 * anything else (an HTML page from a proxy, an empty body) gets a message naming the status.
 */
export function mapCompatibleError(reply: UpstreamReply): ErrorBody {
  const raw = Buffer.from(reply.body).toString('utf8');
  try {
    const parsed = JSON.parse(raw) as Record<string, unknown>;
    const error = parsed?.error;
    if (error && typeof error === 'object') {
      const fields = error as Record<string, unknown>;
      return {
        message: asString(fields.message) ?? `The provider returned HTTP ${reply.status}.`,
        type: asString(fields.type) ?? byStatus(reply.status),
        param: asString(fields.param),
        code: asString(fields.code),
      };
    }
    if (typeof error === 'string') return { message: error, type: byStatus(reply.status), param: null, code: null };
    if (typeof parsed?.message === 'string') {
      return { message: parsed.message, type: asString(parsed.type) ?? byStatus(reply.status), param: asString(parsed.param), code: asString(parsed.code) };
    }
    const detail = detailMessage(parsed?.detail);
    if (detail !== null) return { message: detail, type: byStatus(reply.status), param: null, code: null };
  } catch {
    // not JSON: described below
  }
  const snippet = raw.replace(/\s+/g, ' ').trim().slice(0, 200);
  return { message: `The provider returned HTTP ${reply.status}${snippet ? `: ${snippet}` : '.'}`, type: byStatus(reply.status), param: null, code: null };
}
