import { PROXY_ERROR_HEADER, UPSTREAM_HEADER } from './instances-harness.js';

/**
 * The requests of the three-instance test's mixed load, sent with plain `fetch` through nginx, and
 * how each one ended, judged from what the client received: a complete answer, a clean error (a
 * status and an error body in the protocol's shape, from an instance or from nginx), or an answer cut
 * short (a 200 whose body ended before its end marker, or whose connection broke).
 */

export const KINDS = ['chat', 'stream', 'routed', 'cached', 'messages', 'messages-stream', 'routed-stream', 'cached-stream'] as const;
export type Kind = (typeof KINDS)[number];

export interface Outcome {
  readonly outcome: 'ok' | 'error' | 'cut' | 'broken';
  readonly status?: number;
  /** The instance that answered (nginx's last upstream address), when nginx reached one. */
  readonly upstream?: string;
  /** Every upstream address nginx tried. */
  readonly tried?: string[];
  /** nginx answered the error itself. */
  readonly fromProxy?: boolean;
  readonly body?: unknown;
  /** `x-gateway-cache` (HIT / MISS) and `x-gateway-route-target`. */
  readonly cache?: string;
  readonly target?: string;
  readonly detail?: string;
}

export interface Request {
  readonly kind: Kind;
  readonly index: number;
  readonly trace: string;
  readonly key: string;
  readonly route: string;
  readonly runId: string;
}

/** The prompts the cached kinds repeat: identical requests, so all but the first few are hits. */
const CACHED_PROMPTS = 4;

function requestOf(request: Request): { path: string; headers: Record<string, string>; body: Record<string, unknown> } {
  const { kind, index, trace, key, route, runId } = request;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-gateway-api-key': key, 'x-gateway-trace-id': trace };
  const stream = kind.endsWith('stream');
  if (kind.startsWith('routed')) headers['x-gateway-config'] = route;
  if (kind.startsWith('messages')) {
    headers['anthropic-version'] = '2023-06-01';
    return { path: '/v1/messages', headers, body: { model: 'gpt-4o-mini', max_tokens: 32, stream, messages: [{ role: 'user', content: `message ${trace}` }] } };
  }
  // The kinds take turns (index % KINDS.length), so the prompt number is taken from the turn.
  const content = kind.startsWith('cached') ? `${runId}: the same question, number ${Math.floor(index / KINDS.length) % CACHED_PROMPTS}` : `question ${trace}`;
  return { path: '/v1/chat/completions', headers, body: { model: 'gpt-4o-mini', max_tokens: 32, stream, messages: [{ role: 'user', content }] } };
}

/** Whether the body is the protocol's complete answer. */
function complete(kind: Kind, text: string): boolean {
  if (kind === 'messages-stream') return /^event: message_stop$/m.test(text) && /"type":"message_stop"/.test(text);
  if (kind.endsWith('stream')) return text.trimEnd().endsWith('data: [DONE]');
  try {
    const body = JSON.parse(text);
    if (kind === 'messages') return body.type === 'message' && Array.isArray(body.content);
    return typeof body.choices?.[0]?.message?.content === 'string';
  } catch {
    return false;
  }
}

/** An error body of the OpenAI shape (`{error: {message, type}}`) or of the Messages API (`{type: "error", error: {type, message}}`). */
function errorShaped(text: string): unknown {
  try {
    const body = JSON.parse(text);
    return typeof body?.error?.message === 'string' && typeof body.error.type === 'string' ? body : undefined;
  } catch {
    return undefined;
  }
}

/** What a request of this kind is billed as: a cached kind's miss is a plain chat (or chat stream) call. */
export const billedAs = (kind: Kind): Kind => (kind === 'cached' ? 'chat' : kind === 'cached-stream' ? 'stream' : kind);

export async function sendOne(baseUrl: string, request: Request): Promise<Outcome> {
  const { path, headers, body } = requestOf(request);
  let answer: Response;
  try {
    answer = await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(300_000) });
  } catch (error) {
    return { outcome: 'broken', detail: `no answer: ${(error as Error).message}` };
  }
  const tried = answer.headers.get(UPSTREAM_HEADER)?.split(', ') ?? [];
  const common = {
    status: answer.status,
    tried,
    ...(tried.length > 0 ? { upstream: tried.at(-1) } : {}),
    ...(answer.headers.get('x-gateway-cache') ? { cache: answer.headers.get('x-gateway-cache')! } : {}),
    ...(answer.headers.get('x-gateway-route-target') ? { target: answer.headers.get('x-gateway-route-target')! } : {}),
  };
  let text: string;
  try {
    text = await answer.text();
  } catch (error) {
    return { ...common, outcome: answer.status === 200 ? 'cut' : 'broken', detail: `body broke: ${(error as Error).message}` };
  }
  if (answer.status === 200) return complete(request.kind, text) ? { ...common, outcome: 'ok' } : { ...common, outcome: 'cut', detail: `incomplete: ${text.slice(-120)}` };
  const error = errorShaped(text);
  if (answer.status >= 400 && error !== undefined) return { ...common, outcome: 'error', fromProxy: answer.headers.get(PROXY_ERROR_HEADER) === '1', body: error, detail: text.slice(0, 300) };
  return { ...common, outcome: 'broken', detail: `status ${answer.status}: ${text.slice(0, 300)}` };
}
