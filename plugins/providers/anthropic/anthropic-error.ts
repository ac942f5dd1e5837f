import { type ErrorBody, errorTypeForStatus, type UpstreamReply } from '../../../core/spec/index.js';

/** Anthropic's own status: 529 is an overloaded API. */
const ANTHROPIC_STATUS_TYPES = { 529: 'overloaded_error' };

const typeFor = (status: number): string => errorTypeForStatus(status, ANTHROPIC_STATUS_TYPES);

/** The `error` object of an Anthropic error body (`{type, message}`) as the gateway's error body. */
export function anthropicErrorBody(error: Record<string, unknown>, status: number): ErrorBody {
  return {
    message: typeof error.message === 'string' && error.message ? error.message : `The provider returned HTTP ${status}.`,
    type: typeof error.type === 'string' ? error.type : typeFor(status),
    param: null,
    code: null,
  };
}

/** Parses `{"type":"error","error":{"type","message"}}`; undefined when the body is not that. */
export function parseAnthropicError(text: string, status: number): ErrorBody | undefined {
  try {
    const parsed = JSON.parse(text) as { error?: unknown } | null;
    if (parsed && typeof parsed.error === 'object' && parsed.error !== null) return anthropicErrorBody(parsed.error as Record<string, unknown>, status);
  } catch {
    // not JSON
  }
  return undefined;
}

/** Describes a body that is no known error shape by its status and first bytes. */
export function describeReply(reply: UpstreamReply, text: string): ErrorBody {
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return { message: `The provider returned HTTP ${reply.status}${snippet ? `: ${snippet}` : '.'}`, type: typeFor(reply.status), param: null, code: null };
}

export function mapAnthropicError(reply: UpstreamReply): ErrorBody {
  const text = Buffer.from(reply.body).toString('utf8');
  return parseAnthropicError(text, reply.status) ?? describeReply(reply, text);
}
