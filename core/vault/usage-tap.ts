import { Transform, type Readable } from 'node:stream';
import type { Usage } from '../spec/unified.js';

export interface ObservedUsage {
  usage?: Usage;
  model?: string;
}

const JSON_LIMIT = 4 * 1024 * 1024;
const STREAM_TAIL = 64 * 1024;

function usageOf(value: unknown): ObservedUsage | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const object = value as { usage?: unknown; model?: unknown };
  const usage = object.usage as Usage | undefined;
  if (!usage || typeof usage.prompt_tokens !== 'number') return undefined;
  return {
    usage: { ...usage, completion_tokens: typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0 },
    ...(typeof object.model === 'string' ? { model: object.model } : {}),
  };
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
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        if (isJson && size <= JSON_LIMIT) {
          const observed = usageOf(JSON.parse(text));
          if (observed) found(observed);
        } else if (isStream) {
          const lines = text.split('\n').filter((line) => line.startsWith('data:'));
          for (let index = lines.length - 1; index >= 0; index -= 1) {
            const data = lines[index].slice(5).trim();
            if (!data.startsWith('{')) continue;
            const observed = usageOf(JSON.parse(data));
            if (observed) {
              found(observed);
              break;
            }
          }
        }
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
