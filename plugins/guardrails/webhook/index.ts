import { createHmac, timingSafeEqual } from 'node:crypto';
import { ALLOW, defineGuardrail, type GuardrailVerdict } from '../../../core/spec/index.js';

export interface WebhookParams {
  /** Where the payload is POSTed. */
  url: string;
  /** HMAC-SHA256 key shared with the webhook (at least 16 characters; never listed). */
  secret: string;
  /** Time allowed for the webhook's answer (default 2000 ms); the policy step's budget also applies. */
  timeoutMs?: number;
  /** Which sides it judges (default both). */
  sides?: Array<'input' | 'output'>;
}

export const SIGNATURE_HEADER = 'x-gateway-signature';
export const TIMESTAMP_HEADER = 'x-gateway-timestamp';
export const REPLY_SIGNATURE_HEADER = 'x-guardrail-signature';

/** `sha256=<hex>` of HMAC-SHA256(secret, `${timestamp}.${body}`). */
export function sign(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Compares byte lengths first: a non-ASCII header can have the expected length in characters, not bytes. */
export function signatureMatches(expected: string, received: unknown): boolean {
  if (typeof received !== 'string') return false;
  const wanted = Buffer.from(expected);
  const got = Buffer.from(received);
  return wanted.length === got.length && timingSafeEqual(wanted, got);
}

/** Most values a reply's `flagged` may list. */
const FLAGGED_MAX = 1000;

/** Maps the webhook's reply (`{ verdict, reason?, texts?, changes?, flagged? }`) to a verdict; anything else throws. */
export function replyVerdict(reply: unknown, count: number): GuardrailVerdict {
  const value = reply as { verdict?: unknown; reason?: unknown; texts?: unknown; changes?: unknown; flagged?: unknown } | null;
  if (value?.verdict === 'allow') return ALLOW;
  // What the service says it flagged, for the log to mask; without it the log masks the texts it denied or changed.
  const flagged =
    Array.isArray(value?.flagged) && value.flagged.length <= FLAGGED_MAX && value.flagged.every((item) => typeof item === 'string') ? { flagged: value.flagged as string[] } : {};
  if (value?.verdict === 'deny') return { action: 'deny', reason: typeof value.reason === 'string' ? `webhook: ${value.reason.slice(0, 200)}` : 'webhook denied', ...flagged };
  if (value?.verdict === 'transform' && Array.isArray(value.texts) && value.texts.length === count && value.texts.every((text) => typeof text === 'string')) {
    const changes: Record<string, number> = {};
    if (typeof value.changes === 'object' && value.changes !== null) {
      for (const [kind, counted] of Object.entries(value.changes)) if (Number.isInteger(counted)) changes[kind] = counted as number;
    }
    return { action: 'transform', texts: value.texts as string[], changes: Object.keys(changes).length ? changes : { webhook: 1 }, ...flagged };
  }
  throw new Error('webhook reply is not a verdict');
}

/**
 * Asks an external service. The payload is signed (`x-gateway-timestamp`, `x-gateway-signature`);
 * the reply must be signed the same way over its own body with the request's timestamp
 * (`x-guardrail-signature`), else it is refused and the step's fail mode decides.
 */
export const webhook = defineGuardrail<WebhookParams>(
  {
    id: 'webhook',
    version: '1.0.0',
    description: 'Calls an external URL with an HMAC-signed payload and maps its signed reply to a verdict (time budget, fail-open or fail-closed).',
    stages: ['input', 'output'],
    incremental: false,
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['url', 'secret'],
      properties: {
        url: { type: 'string', pattern: '^https?://' },
        secret: { type: 'string', minLength: 16, writeOnly: true },
        timeoutMs: { type: 'integer', minimum: 1 },
        sides: { type: 'array', minItems: 1, items: { enum: ['input', 'output'] } },
      },
    },
  },
  (params, { http, clock }) => {
    const sides = new Set(params.sides ?? ['input', 'output']);
    return async (input) => {
      if (!sides.has(input.side)) return ALLOW;
      const body = JSON.stringify({
        side: input.side,
        operation: input.operation,
        model: input.model ?? null,
        texts: input.texts,
        metadata: input.metadata,
        parameters: input.parameters,
      });
      const timestamp = String(clock.now());
      // The gateway's control-plane client: redirects are not followed, and the reply is kept as
      // text, since its signature is over the bytes received.
      const reply = await http.post<string>(params.url, body, {
        timeout: params.timeoutMs ?? 2000,
        maxRedirects: 0,
        responseType: 'text',
        transformResponse: [(data) => data],
        headers: { 'content-type': 'application/json', [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: sign(params.secret, timestamp, body) },
      });
      if (!signatureMatches(sign(params.secret, timestamp, reply.data), reply.headers[REPLY_SIGNATURE_HEADER])) {
        throw new Error('webhook reply signature is missing or wrong');
      }
      return replyVerdict(JSON.parse(reply.data), input.texts.length);
    };
  },
);
