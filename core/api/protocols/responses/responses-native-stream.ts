import { type AnswerText, ChunkRestorer, type ChunkRestoring, HeldTexts, type OutputJudge, restoreValue } from '../../../guardrails/output/index.js';
import type { Restorer } from '../../../spec/guardrail.js';
import type { StreamMapper } from '../../../spec/provider.js';
import type { ContentPart, ResponseEvent, ResponseItem, ResponseObject } from '../../../spec/responses.js';
import type { ErrorBody } from '../../../spec/unified.js';
import type { StreamEncoder } from '../../stream-relay.js';
import { EventWriter, terminalEvent } from './responses-events.js';
import { clientItems } from './responses-objects.js';

/**
 * A provider that speaks the Responses API streams its own events; the gateway relays them through
 * the same stream relay as every stream, each event wrapped as a chunk whose one choice (when the
 * event carries answer text) is what the output judge reads: a text delta is `delta.content`, the
 * end of a text part is a `finish_reason`. Every text part is its own choice, so the judge keeps a
 * window per part.
 */
export interface NativeChunk {
  choices: NativeChoice[];
  model?: string;
  usage?: null;
  /** The provider's event (absent on text the judge released at the end of the stream). */
  event?: ResponseEvent;
  /** Set on the judge's denial. */
  filtered?: true;
  /** Events to write before `event` (function-call arguments the restorer held back, released before their `done`). */
  before?: ResponseEvent[];
}

export interface NativeChoice {
  index: number;
  delta: { content?: string };
  finish_reason: string | null;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** Text parts by the judge's choice index, shared by the mapper (which numbers them) and the output (which writes them). */
class TextParts {
  private readonly indices = new Map<string, number>();
  readonly byIndex = new Map<number, { item_id: string; output_index: number; content_index: number; text: string; open: boolean }>();

  indexOf(event: ResponseEvent): number {
    const key = `${String(event.item_id)}:${String(event.content_index)}`;
    let index = this.indices.get(key);
    if (index === undefined) {
      index = this.indices.size;
      this.indices.set(key, index);
      this.byIndex.set(index, { item_id: String(event.item_id), output_index: Number(event.output_index), content_index: Number(event.content_index), text: '', open: true });
    }
    return index;
  }

  /** The judged text of a part of `item`, if it was streamed. */
  textOf(itemId: unknown, contentIndex: number): string | undefined {
    const index = this.indices.get(`${String(itemId)}:${contentIndex}`);
    return index === undefined ? undefined : this.byIndex.get(index)?.text;
  }
}

/** Wraps the provider's event mapper: its events become {@link NativeChunk}s. */
export function nativeChunks(inner: StreamMapper<ResponseEvent>, parts: TextParts): StreamMapper<NativeChunk> {
  let model: string | undefined;
  return {
    map(upstream) {
      const step = inner.map(upstream);
      if (!step.chunks) return step as { done?: boolean; error?: ErrorBody };
      const chunks = step.chunks.map((event): NativeChunk => {
        if (event.type === 'response.created' && typeof (event.response as ResponseObject | undefined)?.model === 'string') model = (event.response as ResponseObject).model;
        if (event.type === 'response.output_text.delta') return { choices: [{ index: parts.indexOf(event), delta: { content: String(event.delta ?? '') }, finish_reason: null }], model, event };
        if (event.type === 'response.output_text.done') return { choices: [{ index: parts.indexOf(event), delta: {}, finish_reason: 'stop' }], model, event };
        return { choices: [], model, event };
      });
      return { ...step, chunks };
    },
  };
}

/** What the output judge reads and writes in a Responses answer: each `output_text` part is a choice. */
interface PartsView {
  choices: Array<{ index: number; text: string; finish_reason: string | null }>;
}

export const nativeAnswerText: AnswerText<PartsView, NativeChunk> = {
  answer: {
    read: (choice) => choice.text,
    write: (choice, text) => ({ ...choice, text }),
    denied: (choice) => ({ ...choice, text: '', finish_reason: 'content_filter' }),
  },
  chunk: {
    read: (choice) => choice.delta.content,
    write: (choice, text) => ({ ...choice, delta: { content: text } }),
    carriesMore: () => false,
    released: (index, text) => ({ index, delta: { content: text }, finish_reason: null }),
    filtered: (source, indices) => ({ choices: indices.map((index) => ({ index, delta: {}, finish_reason: 'content_filter' })), model: source?.model, filtered: true }),
  },
};

const isTextPart = (part: unknown): part is ContentPart => (part as ContentPart | undefined)?.type === 'output_text';

/**
 * Judges a plain Responses answer: its `output_text` parts, as one answer with a choice per part. A
 * denial empties them and makes the response `incomplete` (`content_filter`); a transform rewrites them.
 */
export async function judgeResponse(response: ResponseObject, judge: OutputJudge): Promise<ResponseObject> {
  const places: Array<{ item: number; part: number }> = [];
  const view: PartsView = { choices: [] };
  response.output.forEach((item, itemIndex) => {
    if (item.type !== 'message' || !Array.isArray(item.content)) return;
    item.content.forEach((part, partIndex) => {
      if (!isTextPart(part)) return;
      places.push({ item: itemIndex, part: partIndex });
      view.choices.push({ index: view.choices.length, text: String(part.text ?? ''), finish_reason: null });
    });
  });
  if (places.length === 0) return response;
  const judged = await judge.response(view, nativeAnswerText);
  const output = response.output.map((item) => (Array.isArray(item.content) ? { ...item, content: [...item.content] } : item));
  places.forEach((place, index) => {
    const content = output[place.item].content as ContentPart[];
    content[place.part] = { ...content[place.part], text: judged.choices[index].text };
  });
  const denied = judged.choices.some((choice) => choice.finish_reason === 'content_filter');
  return denied ? { ...response, output, status: 'incomplete', incomplete_details: { reason: 'content_filter' } } : { ...response, output };
}

export interface NativeOutputOptions {
  readonly include: readonly string[] | null | undefined;
  /** Called with the finished Response before its terminal event is written (usage, the store). */
  finished(response: ResponseObject): Promise<void>;
  /**
   * The client's `previous_response_id`, echoed in every Response the stream carries: the provider
   * was sent the conversation in `input` instead, so its own Responses say null.
   */
  readonly previousResponseId?: string;
}

/**
 * Writes the provider's events to the client, renumbered, with the judged text: deltas the judge
 * holds back are written when it releases them, `done` events and the items and response that
 * close a text part carry the text the client was sent. The provider's terminal event is held until
 * the upstream is done (the response is stored first). A denial closes what is open and ends the
 * stream with `response.incomplete` (`content_filter`); the provider's later events are not sent.
 */
export class NativeResponsesOutput implements StreamEncoder<NativeChunk> {
  private phase: 'relaying' | 'filtered' | 'ended' = 'relaying';
  private readonly writer = new EventWriter();
  private snapshot?: ResponseObject;
  private terminal?: ResponseEvent;
  private readonly opened = new Map<number, ResponseItem>();
  private readonly done: ResponseItem[] = [];

  constructor(
    readonly parts: TextParts,
    private readonly options: NativeOutputOptions,
  ) {}

  static create(inner: StreamMapper<ResponseEvent>, options: NativeOutputOptions): { mapper: StreamMapper<NativeChunk>; output: NativeResponsesOutput } {
    const parts = new TextParts();
    return { mapper: nativeChunks(inner, parts), output: new NativeResponsesOutput(parts, options) };
  }

  chunk(chunk: NativeChunk): string {
    const before = this.phase === 'relaying' && chunk.before ? chunk.before.map((event) => this.writer.sse(event)).join('') : '';
    return before + this.written(chunk);
  }

  private written(chunk: NativeChunk): string {
    if (this.phase === 'ended') return '';
    if (chunk.filtered) {
      this.phase = 'filtered';
      return this.closeOpen();
    }
    const event = this.echoed(chunk.event);
    if (this.phase === 'filtered' || !event || event.type === 'response.output_text.delta' || event.type === 'response.output_text.done') {
      if (event && TERMINAL.has(event.type)) this.terminal = event;
      return this.phase === 'filtered' ? '' : this.text(chunk);
    }
    if (TERMINAL.has(event.type)) {
      this.terminal = { ...event, response: this.patched(event.response as ResponseObject) };
      return '';
    }
    if (event.type === 'response.created' || event.type === 'response.in_progress') this.snapshot = event.response as ResponseObject;
    if (event.type === 'response.output_item.added') this.opened.set(Number(event.output_index), event.item as ResponseItem);
    if (event.type === 'response.content_part.done' && isTextPart(event.part)) {
      const text = this.parts.textOf(event.item_id, Number(event.content_index));
      if (text !== undefined) return this.writer.sse({ ...event, part: { ...event.part, text } });
    }
    if (event.type === 'response.output_item.done') {
      const item = this.patchedItem(event.item as ResponseItem);
      this.opened.delete(Number(event.output_index));
      this.done[Number(event.output_index)] = item;
      return this.writer.sse({ ...event, item });
    }
    return this.writer.sse(event);
  }

  /** Text deltas as the judge let them through; a part's `done` after what the judge released last. */
  private text(chunk: NativeChunk): string {
    let out = '';
    for (const choice of chunk.choices) {
      const part = this.parts.byIndex.get(choice.index);
      if (!part) continue;
      const content = choice.delta.content;
      if (content) {
        part.text += content;
        const base = chunk.event?.type === 'response.output_text.delta' ? chunk.event : { type: 'response.output_text.delta', sequence_number: 0 };
        out += this.writer.sse({ ...base, item_id: part.item_id, output_index: part.output_index, content_index: part.content_index, delta: content, logprobs: [] });
      }
      if (chunk.event?.type === 'response.output_text.done') {
        part.open = false;
        out += this.writer.sse({ ...chunk.event, text: part.text });
      }
    }
    return out;
  }

  /** The event with the client's `previous_response_id` in the Response it carries (when there is one). */
  private echoed(event: ResponseEvent | undefined): ResponseEvent | undefined {
    const previous = this.options.previousResponseId;
    if (previous === undefined || event === undefined || event.response === null || typeof event.response !== 'object') return event;
    return { ...event, response: { ...(event.response as ResponseObject), previous_response_id: previous } };
  }

  private patchedItem(item: ResponseItem): ResponseItem {
    if (item.type !== 'message' || !Array.isArray(item.content)) return item;
    return {
      ...item,
      content: item.content.map((part, index) => {
        const text = isTextPart(part) ? this.parts.textOf(item.id, index) : undefined;
        return text === undefined ? part : { ...part, text };
      }),
    };
  }

  private patched(response: ResponseObject): ResponseObject {
    return { ...response, output: (response.output ?? []).map((item) => this.patchedItem(item)) };
  }

  /** On a denial: the open text parts and items end with what was sent. */
  private closeOpen(): string {
    let out = '';
    for (const part of this.parts.byIndex.values()) {
      if (!part.open) continue;
      part.open = false;
      const at = { item_id: part.item_id, output_index: part.output_index, content_index: part.content_index };
      out += this.writer.write('response.output_text.done', { ...at, text: part.text, logprobs: [] });
      out += this.writer.write('response.content_part.done', { ...at, part: { type: 'output_text', text: part.text, annotations: [] } });
    }
    for (const [index, item] of [...this.opened].sort(([a], [b]) => a - b)) {
      const content = item.type === 'message' ? [...this.parts.byIndex.values()].filter((part) => part.item_id === item.id).map((part) => ({ type: 'output_text', text: part.text, annotations: [] })) : item.content;
      const closed = { ...item, status: 'incomplete', ...(content !== undefined ? { content } : {}) };
      this.done[index] = closed;
      out += this.writer.write('response.output_item.done', { output_index: index, item: closed });
    }
    this.opened.clear();
    return out;
  }

  private base(): ResponseObject {
    const base = { ...(this.snapshot ?? ({ id: '', object: 'response', created_at: Math.floor(Date.now() / 1000), model: '' } as ResponseObject)), output: this.done.filter(Boolean) };
    return this.options.previousResponseId === undefined ? base : { ...base, previous_response_id: this.options.previousResponseId };
  }

  async end(): Promise<string> {
    if (this.phase === 'ended') return '';
    const filtered = this.phase === 'filtered' || !this.terminal;
    this.phase = 'ended';
    const usage = (this.terminal?.response as ResponseObject | undefined)?.usage ?? null;
    const response: ResponseObject = filtered
      ? { ...this.base(), status: 'incomplete', incomplete_details: { reason: 'content_filter' }, error: null, usage }
      : (this.terminal!.response as ResponseObject);
    await this.options.finished(response);
    const shown = { ...response, output: clientItems(response.output, this.options.include) };
    return this.writer.write(filtered ? 'response.incomplete' : terminalEvent(response), { response: shown });
  }

  async error(error: ErrorBody): Promise<string> {
    if (this.phase === 'ended') return '';
    const out = this.phase === 'relaying' ? this.closeOpen() : '';
    this.phase = 'ended';
    const response: ResponseObject = { ...this.base(), status: 'failed', incomplete_details: null, error: { code: error.code ?? error.type, message: error.message } };
    await this.options.finished(response);
    return out + this.writer.write('response.failed', { response: { ...response, output: clientItems(response.output, this.options.include) } });
  }
}

/**
 * Restores a native Responses stream: text parts through their choices (a held placeholder start
 * goes out with the part's `done`), function-call arguments per item, held back in the same way
 * and released before their `response.function_call_arguments.done`, every other event whole.
 */
export function nativeResponsesRestorer(restorer: Restorer | undefined): ChunkRestoring<NativeChunk> | undefined {
  if (!restorer) return undefined;
  const texts = new ChunkRestorer<{ choices: NativeChoice[] }>(restorer);
  const args = new HeldTexts(restorer);
  const restoredEvent = (event: ResponseEvent | undefined): Pick<NativeChunk, 'event' | 'before'> => {
    if (!event || event.type === 'response.output_text.delta' || event.type === 'response.output_text.done') return { event };
    const key = String(event.item_id);
    if (event.type === 'response.function_call_arguments.delta') return { event: { ...event, delta: args.take(key, String(event.delta ?? ''), true) } };
    const restored = restoreValue(event, restorer);
    if (event.type !== 'response.function_call_arguments.done' || !args.has(key)) return { event: restored };
    const delta = { type: 'response.function_call_arguments.delta', sequence_number: 0, item_id: event.item_id, output_index: event.output_index, delta: args.flush(key) };
    return { event: restored, before: [delta] };
  };
  return {
    push: (chunk) => ({ ...chunk, ...(chunk.choices.length > 0 ? texts.push({ choices: chunk.choices }) : {}), ...restoredEvent(chunk.event) }),
    // Text a part never closed: released as text with no event of its own (as the judge releases it).
    end: () => {
      const rest = texts.end();
      return rest ? { choices: rest.choices } : undefined;
    },
  };
}
