/**
 * Synthetic log rows for the log benchmarks (bench/log-search.ts, bench/logs-page.ts): traffic in
 * time order, a few models, providers and keys, some errors, and chat-shaped bodies whose words come
 * from a vocabulary of 5 000, so that a search index gets realistic posting lists.
 */
import { timeOrderedId } from '../core/ids.js';
import type { LogRecord } from '../core/logs/record.js';

export const MODELS = Array.from({ length: 20 }, (_, index) => `model-${index}`);
export const PROVIDERS = ['openai', 'anthropic', 'bedrock', 'vertex'];
export const KEYS = Array.from({ length: 50 }, (_, index) => `vk_${index}`);
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'zi', 'be', 'do', 'fu', 'ga', 'hi', 'jo', 'pe', 'su', 'wa', 'xe', 'yo', 'qu'];
/** 5 000 made-up words (ranked: the first ones are drawn far more often, as in language). */
export const WORDS = Array.from({ length: 5000 }, (_, index) => `${SYLLABLES[index % 20]}${SYLLABLES[Math.floor(index / 20) % 20]}${SYLLABLES[Math.floor(index / 400) % 20]}`);

/** A deterministic pseudo-random sequence. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Words with a Zipf-like rank distribution. */
const sentence = (next: () => number, count: number) => Array.from({ length: count }, () => WORDS[Math.floor(WORDS.length * next() ** 3)]).join(' ');

export interface RowOptions {
  /** Time of the first row and the span the rows cover (ms). */
  start: number;
  spanMs: number;
  /** Rows in the whole set (for spreading times evenly). */
  total: number;
  /** Share of rows with bodies (0..1). */
  bodyShare: number;
}

/** `count` rows starting at row `offset` of the set. */
export function makeRows(count: number, offset: number, next: () => number, options: RowOptions): LogRecord[] {
  return Array.from({ length: count }, (_, index): LogRecord => {
    const position = offset + index;
    const key = next() < 0.3 ? undefined : KEYS[Math.floor(next() * KEYS.length)];
    const roll = next();
    const status = roll < 0.93 ? 200 : roll < 0.97 ? 429 : roll < 0.99 ? 400 : 502;
    const latency = 50 + next() * 2000;
    const model = MODELS[Math.floor(next() * MODELS.length)];
    const bodies = next() < options.bodyShare;
    return {
      id: timeOrderedId(),
      time: new Date(options.start + Math.floor((position * options.spanMs) / options.total)).toISOString(),
      trace_id: `bench-trace-${position}`,
      caller_type: key ? 'virtual-key' : 'account',
      key_id: key ?? null,
      key_name: key ? `key ${key}` : null,
      end_user: next() < 0.5 ? `user-${Math.floor(next() * 1000)}` : null,
      provider: PROVIDERS[Math.floor(next() * PROVIDERS.length)],
      model,
      operation: 'chat',
      method: 'POST',
      path: '/v1/chat/completions',
      status,
      outcome: status < 400 ? 'ok' : 'error',
      error_type: status < 400 ? null : status === 429 ? 'rate_limit_error' : 'upstream_error',
      error_code: status < 400 ? null : status === 429 ? 'rate_limited' : 'bad_gateway',
      error_message: status < 400 ? null : 'The upstream failed',
      streaming: next() < 0.5,
      latency_ms: latency,
      gateway_ms: 0.4 + next(),
      upstream_ms: latency - 1,
      ttft_ms: null,
      prompt_tokens: Math.floor(next() * 2000),
      completion_tokens: Math.floor(next() * 500),
      cached_tokens: null,
      reasoning_tokens: null,
      total_tokens: 0,
      cost_usd: next() / 100,
      cache_status: next() < 0.2 ? 'HIT' : 'MISS',
      cache_saved_usd: null,
      metadata: next() < 0.2 ? { team: `team-${Math.floor(next() * 10)}` } : {},
      guardrails: [],
      request_body: bodies ? JSON.stringify({ model, messages: [{ role: 'system', content: sentence(next, 12) }, { role: 'user', content: sentence(next, 60) }] }) : null,
      response_body: bodies
        ? JSON.stringify({ id: `chatcmpl-${position}`, object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: sentence(next, 50) }, finish_reason: 'stop' }] })
        : null,
    };
  });
}
