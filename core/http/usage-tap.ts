import { Transform, type Readable } from 'node:stream';
import { SseDecoder } from './sse.js';
import type { Usage } from '../spec/unified.js';

export interface ObservedUsage {
  usage?: Usage;
  model?: string;
}

const JSON_LIMIT = 4 * 1024 * 1024;
const STREAM_TAIL = 64 * 1024;

const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** Usage in the shapes providers report it: `prompt_tokens`/`completion_tokens`, or `input_tokens`/`output_tokens`. */
function tokensOf(value: unknown): Usage | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const usage = value as Record<string, unknown>;
  const prompt = count(usage.prompt_tokens) ?? count(usage.input_tokens);
  if (prompt === undefined) return undefined;
  const completion = count(usage.completion_tokens) ?? count(usage.output_tokens) ?? 0;
  return { ...usage, prompt_tokens: prompt, completion_tokens: completion, total_tokens: count(usage.total_tokens) ?? prompt + completion };
}

/**
 * The usage a pass-through body reports: at its top level (chat, Anthropic messages), or inside
 * `response` (the Responses API's final stream event) or `message` (Anthropic's message_start).
 */
export function usageOf(value: unknown): ObservedUsage | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const object = value as { usage?: unknown; model?: unknown; response?: unknown; message?: unknown };
  const usage = tokensOf(object.usage);
  if (!usage) return usageOf(object.response) ?? usageOf(object.message);
  return { usage, ...(typeof object.model === 'string' ? { model: object.model } : {}) };
}

/**
 * The usage of the last event that reports one, in the tail of an SSE stream (decoded by the
 * gateway's SSE decoder: the tail may start inside an event, whose remains are no event).
 */
function lastStreamUsage(tail: Buffer): ObservedUsage | undefined {
  const decoder = new SseDecoder();
  const events = [...decoder.push(tail), ...decoder.end()];
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const data = events[index].data.trim();
    if (!data.startsWith('{')) continue;
    const observed = usageOf(JSON.parse(data));
    if (observed) return observed;
  }
  return undefined;
}

/**
 * Watches a pass-through response on its way to the client (bytes untouched, nothing delayed) and
 * reads the token usage it reports: from a JSON body (up to 4 MB), or from the last `data:` event
 * of a server-sent event stream that carries `usage`. So pass-through traffic is charged to a
 * virtual key's budget like the unified endpoints.
 */
export function tapUsage(body: Readable, contentType: string, found: (observed: ObservedUsage) => void): Readable {
  const isStream = contentType.includes('text/event-stream');
  const isJson = contentType.includes('json');
  if (!isStream && !isJson) return body;
  const chunks: Buffer[] = [];
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (isJson) {
        if (size <= JSON_LIMIT) chunks.push(chunk);
      } else {
        chunks.push(chunk);
        while (size > STREAM_TAIL && chunks.length > 1) size -= chunks.shift()!.length;
      }
      size += chunk.length;
      callback(null, chunk);
    },
    flush(callback) {
      const bytes = Buffer.concat(chunks);
      try {
        const observed = isJson && size <= JSON_LIMIT ? usageOf(JSON.parse(bytes.toString('utf8'))) : isStream ? lastStreamUsage(bytes) : undefined;
        if (observed) found(observed);
      } catch {
        // Not JSON after all: nothing to charge from it.
      }
      callback();
    },
  });
  body.on('error', (error) => tap.destroy(error));
  tap.on('close', () => {
    if (!body.destroyed) body.destroy();
  });
  return body.pipe(tap);
}
