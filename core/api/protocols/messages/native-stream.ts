import type { AnswerText } from '../../../guardrails/output/index.js';
import type { MessagesResponse, MessagesStreamEvent, MessagesUsage } from '../../../spec/messages.js';
import type { StreamMapper, StreamStep, UpstreamEvent } from '../../../spec/provider.js';
import type { ErrorBody, Usage } from '../../../spec/unified.js';
import type { StreamEncoder } from '../../stream-relay.js';
import { ChunkRestorer, type ChunkRestoring, HeldTexts, restoreValue } from '../../../guardrails/output/index.js';
import type { Restorer } from '../../../spec/guardrail.js';
import { errorEvent, sseEvent } from './stream-encoder.js';
import { unifiedMessagesUsage } from '../../../spec/messages-usage.js';

/**
 * A native Messages stream event as the stream relay carries it. `choices` expose the text of text
 * blocks to output guardrails, one "choice" per content block (its index): a `text_delta` carries
 * its text, the `content_block_stop` of a text block ends that choice (so text held back is
 * released inside its block). Other events carry no choice and pass the judge untouched.
 * `usage` (unified) is set on `message_delta`, once the whole usage is known.
 */
export interface NativeChunk {
  readonly event: MessagesStreamEvent;
  readonly choices: NativeChoice[];
  readonly usage?: Usage | null;
  readonly model?: string;
  /** Events to write before `event` (tool input the restorer held back, released before its block's stop). */
  readonly before?: readonly MessagesStreamEvent[];
}

export interface NativeChoice {
  readonly index: number;
  readonly text?: string;
  readonly finish_reason: string | null;
  readonly logprobs?: unknown;
}

const record = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {});

/**
 * Wraps a provider's native Messages stream mapper: its events become {@link NativeChunk}s, with the
 * usage of `message_start` and `message_delta` merged (Anthropic sends the input counts first and
 * the output count last).
 */
export function nativeChunkMapper(mapper: StreamMapper<MessagesStreamEvent>): StreamMapper<NativeChunk> {
  const usage: Partial<MessagesUsage> = {};
  const textBlocks = new Set<number>();
  let model: string | undefined;
  const take = (value: unknown) => {
    for (const [field, count] of Object.entries(record(value))) if (typeof count === 'number') usage[field] = count;
  };
  const chunkOf = (event: MessagesStreamEvent): NativeChunk => {
    const index = typeof event.index === 'number' ? event.index : -1;
    switch (event.type) {
      case 'message_start': {
        const message = record(event.message);
        if (typeof message.model === 'string') model = message.model;
        take(message.usage);
        return { event, choices: [], model };
      }
      case 'content_block_start':
        if (record(event.content_block).type === 'text') textBlocks.add(index);
        return { event, choices: [], model };
      case 'content_block_delta': {
        const delta = record(event.delta);
        if (delta.type === 'text_delta' && typeof delta.text === 'string') return { event, choices: [{ index, text: delta.text, finish_reason: null }], model };
        return { event, choices: [], model };
      }
      case 'content_block_stop':
        return { event, choices: textBlocks.has(index) ? [{ index, finish_reason: 'stop' }] : [], model };
      case 'message_delta':
        take(event.usage);
        return { event, choices: [], model, usage: unifiedMessagesUsage(usage) };
      default:
        return { event, choices: [], model };
    }
  };
  return {
    map(upstream: UpstreamEvent): StreamStep<NativeChunk> {
      const step = mapper.map(upstream);
      return { ...step, chunks: step.chunks?.map(chunkOf) };
    },
  };
}

/**
 * Writes native Messages events back to the client as SSE, as received unless output guardrails
 * changed them: a `text_delta` carries its judged text (nothing when all of it is held back), text
 * released at a block's end goes in one `text_delta` before that block's `content_block_stop`, and a
 * denial closes the open block and ends the message with `stop_reason: "refusal"`.
 */
export class NativeStreamEncoder implements StreamEncoder<NativeChunk> {
  private ended = false;
  private openBlock?: number;
  private outputTokens = 0;

  chunk(chunk: NativeChunk): string {
    if (this.ended) return '';
    const { event } = chunk;
    if (chunk.choices.some((choice) => choice.finish_reason === 'content_filter')) return this.refuse();
    const index = typeof event.index === 'number' ? event.index : -1;
    const text = chunk.choices.find((choice) => choice.index === index)?.text;
    const before = chunk.before?.map(sseEvent).join('') ?? '';
    return before + this.event(event, index, text);
  }

  private event(event: MessagesStreamEvent, index: number, text: string | undefined): string {
    switch (event.type) {
      case 'content_block_delta':
        if (record(event.delta).type !== 'text_delta') break;
        return text ? sseEvent({ ...event, delta: { type: 'text_delta', text } }) : '';
      case 'content_block_start':
        this.openBlock = index;
        break;
      case 'content_block_stop':
        this.openBlock = undefined;
        return (text ? sseEvent({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }) : '') + sseEvent(event);
      case 'message_delta':
        this.outputTokens = Number(record(event.usage).output_tokens) || 0;
        break;
      case 'message_stop':
        this.ended = true;
        break;
    }
    return sseEvent(event);
  }

  end(): string {
    // A complete stream ended with its own message_stop; a denied one with the refusal.
    return '';
  }

  error(error: ErrorBody): string {
    this.ended = true;
    return errorEvent(error);
  }

  private refuse(): string {
    this.ended = true;
    const close = this.openBlock === undefined ? '' : sseEvent({ type: 'content_block_stop', index: this.openBlock });
    return (
      close +
      sseEvent({ type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: this.outputTokens } }) +
      sseEvent({ type: 'message_stop' })
    );
  }
}

/** A native Message's text blocks as the choices an output judge reads (one per text block, by content index). */
export interface NativeAnswer {
  readonly message: MessagesResponse;
  readonly choices: NativeChoice[];
}

export const nativeAnswerOf = (message: MessagesResponse): NativeAnswer => ({
  message,
  choices: message.content.flatMap((block, index) => (block.type === 'text' ? [{ index, text: String(block.text), finish_reason: null }] : [])),
});

/**
 * The Message after the judge: a denial is a refusal with no content (as chat's denial empties the
 * answer), a rewrite replaces the text of the blocks it changed.
 */
export function judgedMessage(answer: NativeAnswer): MessagesResponse {
  const { message } = answer;
  if (answer.choices.some((choice) => choice.finish_reason === 'content_filter')) return { ...message, content: [], stop_reason: 'refusal', stop_sequence: null };
  const texts = new Map(answer.choices.map((choice) => [choice.index, choice.text]));
  return { ...message, content: message.content.map((block, index) => (texts.has(index) && texts.get(index) !== block.text ? { ...block, text: texts.get(index) } : block)) };
}

/** Where native Messages answers keep their text, for the output judge. */
export const nativeAnswerText: AnswerText<NativeAnswer, NativeChunk> = {
  answer: {
    read: (choice) => choice.text,
    write: (choice, text) => ({ ...choice, text }),
    denied: (choice) => ({ ...choice, text: '', finish_reason: 'content_filter' }),
  },
  chunk: {
    read: (choice) => choice.text,
    write: (choice, text) => ({ ...choice, text }),
    carriesMore: () => false,
    released: (index, text) => ({ index, text, finish_reason: null }),
    filtered: (source, indices) => ({
      event: source?.event ?? { type: 'ping' },
      choices: indices.map((index) => ({ index, finish_reason: 'content_filter' })),
      usage: null,
    }),
  },
};

/**
 * Restores a native Messages stream: text blocks through their choices (a held placeholder start
 * goes out with the block's stop), tool input (`input_json_delta`) per block, held back in the same
 * way and released before the block's `content_block_stop`, and every other event whole.
 */
export function nativeMessagesRestorer(restorer: Restorer | undefined): ChunkRestoring<NativeChunk> | undefined {
  if (!restorer) return undefined;
  const texts = new ChunkRestorer<{ choices: NativeChoice[] }>(restorer);
  const inputs = new HeldTexts(restorer);
  const restoredEvent = (event: MessagesStreamEvent): Pick<NativeChunk, 'event' | 'before'> => {
    const key = String(event.index);
    const delta = record(event.delta);
    if (event.type === 'content_block_delta' && delta.type === 'text_delta') return { event };
    if (event.type === 'content_block_delta' && delta.type === 'input_json_delta') {
      return { event: { ...event, delta: { ...delta, partial_json: inputs.take(key, String(delta.partial_json ?? ''), true) } } };
    }
    if (event.type === 'content_block_stop' && inputs.has(key)) {
      return { event, before: [{ type: 'content_block_delta', index: event.index, delta: { type: 'input_json_delta', partial_json: inputs.flush(key) } }] };
    }
    return { event: restoreValue(event, restorer) };
  };
  return {
    push: (chunk) => ({ ...chunk, ...(chunk.choices.length > 0 ? texts.push({ choices: chunk.choices }) : {}), ...restoredEvent(chunk.event) }),
    // A Messages stream closes every block before it ends: nothing is left to release.
    end: () => undefined,
  };
}
