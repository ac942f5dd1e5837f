import type { Restorer } from '../../spec/guardrail.js';
import type { ChunkRestoring, TextChoice } from './types.js';

/**
 * Fields whose string is itself JSON text (a tool call's `arguments`, a Messages `partial_json`):
 * a value put back inside them is escaped as a JSON string's content, so the arguments stay valid JSON.
 */
const JSON_TEXT_FIELDS = new Set(['arguments', 'partial_json']);

/** Several input transforms' restorers as one: the answer is restored last transform first. */
export function chainedRestorer(restorers: readonly Restorer[]): Restorer {
  if (restorers.length === 1) return restorers[0];
  const reversed = [...restorers].reverse();
  return {
    restore: (text, json) => reversed.reduce((restored, restorer) => restorer.restore(restored, json), text),
    heldFrom: (text) => Math.min(...restorers.map((restorer) => restorer.heldFrom(text))),
    conceal: (text, json) => restorers.reduce((concealed, restorer) => (restorer.conceal ? restorer.conceal(concealed, json) : concealed), text),
  };
}

/** `value` with `map` applied to every string (`json`: the string is JSON text); `value` itself when nothing changed. */
function mapStrings<Value>(value: Value, map: (text: string, json: boolean) => string, field = ''): Value {
  if (typeof value === 'string') return map(value, JSON_TEXT_FIELDS.has(field)) as Value;
  if (Array.isArray(value)) {
    let changed = false;
    const items = value.map((item: unknown) => {
      const mapped = mapStrings(item, map, field);
      changed ||= mapped !== item;
      return mapped;
    });
    return (changed ? items : value) as Value;
  }
  if (typeof value === 'object' && value !== null) {
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(value)) {
      const mapped = mapStrings(item, map, key);
      if (mapped !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = mapped;
    }
    return (copy ?? value) as Value;
  }
  return value;
}

/**
 * A whole answer (any protocol's object: chat, Messages, Responses) with every string restored:
 * texts, tool-call arguments, structured output, tool inputs. Returns `value` itself when nothing
 * changed, so that an answer sent as received keeps its bytes.
 */
export function restoreValue<Value>(value: Value, restorer: Restorer, field = ''): Value {
  return mapStrings(value, (text, json) => (text.includes('<') ? restorer.restore(text, json) : text), field);
}

/**
 * A whole answer with what `restorer` put back taken out again (values → placeholders), when it can
 * (`Restorer.conceal`): a conversation's turn stored as the model wrote it, so that the next turn
 * sends the model the placeholders it saw.
 */
export function concealValue<Value>(value: Value, restorer: Restorer): Value {
  const conceal = restorer.conceal;
  return conceal ? mapStrings(value, (text, json) => conceal(text, json)) : value;
}

/**
 * Texts that arrive in fragments (one per key: a choice's content, a tool call's arguments), restored
 * as they flow: what may be the start of a placeholder at a fragment's end is held back and put in
 * front of the same text's next fragment, so a placeholder split across fragments is restored whole.
 */
export class HeldTexts {
  private readonly held = new Map<string, string>();

  constructor(private readonly restorer: Restorer) {}

  /** The restored text to send now for this fragment of the text `key`. */
  take(key: string, fragment: string, json: boolean): string {
    const before = this.held.get(key);
    if (before === undefined && !fragment.includes('<')) return fragment;
    const text = (before ?? '') + fragment;
    const cut = this.restorer.heldFrom(text);
    if (cut < text.length) this.held.set(key, text.slice(cut));
    else this.held.delete(key);
    const released = text.slice(0, cut);
    return released.includes('<') ? this.restorer.restore(released, json) : released;
  }

  /** The text `key` has ended: what was held back for it, as written ('' when nothing). */
  flush(key: string): string {
    const text = this.held.get(key) ?? '';
    this.held.delete(key);
    return text;
  }

  has(key: string): boolean {
    return this.held.has(key);
  }

  keys(): string[] {
    return [...this.held.keys()];
  }
}

/** A step from a chunk to one of its strings: a field, an array position, or the element of an array whose `index` is this. */
type Step = string | number | { readonly index: number };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/**
 * Restores a stream of unified chunks as it flows. Each string of a chunk belongs to a text that
 * continues in later chunks at the same place (`choices[index].delta.content`,
 * `choices[index].delta.tool_calls[index].function.arguments`, array elements known by their
 * `index`): what may be the start of a placeholder at its end is held back and put in front of
 * that text's next fragment, so a placeholder split across chunks is restored whole. A choice that
 * finishes carries what is still held for it (unless the output guardrails cut it: `content_filter`);
 * the stream's end releases the rest in one chunk.
 */
export class ChunkRestorer<Chunk extends { choices: TextChoice[] }> implements ChunkRestoring<Chunk> {
  private readonly held: HeldTexts;
  /** Where each text with something held back is, to put it back in a later chunk. */
  private readonly paths = new Map<string, readonly Step[]>();
  private last?: Chunk;

  constructor(restorer: Restorer) {
    this.held = new HeldTexts(restorer);
  }

  push(chunk: Chunk): Chunk {
    this.last = chunk;
    let restored = this.walk(chunk, [], '') as Chunk;
    if (this.paths.size === 0) return restored;
    for (const choice of chunk.choices) {
      if (choice.finish_reason === null || choice.finish_reason === undefined) continue;
      const prefix = `.choices[#${choice.index}]`;
      for (const [key, path] of this.paths) {
        if (!key.startsWith(`${prefix}.`) && !key.startsWith(`${prefix}[`)) continue;
        const held = this.held.flush(key);
        // A choice the output guardrails cut sends nothing more.
        if (choice.finish_reason !== 'content_filter') restored = appendAt(restored, path, held) as Chunk;
        this.paths.delete(key);
      }
    }
    return restored;
  }

  end(): Chunk | undefined {
    if (this.paths.size === 0 || !this.last) return undefined;
    let chunk: Record<string, unknown> = { ...this.last, choices: [] };
    if ('usage' in chunk) chunk.usage = null;
    for (const [key, path] of this.paths) chunk = appendAt(chunk, path, this.held.flush(key)) as Record<string, unknown>;
    this.paths.clear();
    return chunk as Chunk;
  }

  /** `value` restored (a copy where something changed), `key` naming its place in the stream. */
  /**
   * `value` restored (a copy where something changed). `path` is the steps to it, a stack shared
   * by the walk: the key naming its place in the stream is only made for a string that needs it.
   */
  private walk(value: unknown, path: Step[], field: string): unknown {
    if (typeof value === 'string') return this.paths.size === 0 && !value.includes('<') ? value : this.text(value, path, field);
    if (Array.isArray(value)) {
      let changed = false;
      const items = value.map((item: unknown, position) => {
        path.push(isRecord(item) && typeof item.index === 'number' ? { index: item.index } : position);
        const restored = this.walk(item, path, field);
        path.pop();
        changed ||= restored !== item;
        return restored;
      });
      return changed ? items : value;
    }
    if (isRecord(value)) {
      let copy: Record<string, unknown> | undefined;
      for (const name in value) {
        const item = value[name];
        path.push(name);
        const restored = this.walk(item, path, name);
        path.pop();
        if (restored !== item) (copy ??= { ...value })[name] = restored;
      }
      return copy ?? value;
    }
    return value;
  }

  private text(fragment: string, path: readonly Step[], field: string): string {
    const key = keyOf(path);
    const released = this.held.take(key, fragment, JSON_TEXT_FIELDS.has(field));
    if (this.held.has(key)) this.paths.set(key, [...path]);
    else this.paths.delete(key);
    return released;
  }
}

/** The key of a place in the stream: `.choices[#0].delta.tool_calls[#1].function.arguments`. */
const keyOf = (path: readonly Step[]): string =>
  path.map((step) => (typeof step === 'string' ? `.${step}` : typeof step === 'number' ? `[${step}]` : `[#${step.index}]`)).join('');

/** A copy of `root` with `text` appended to the string at `path` (made, with what leads to it, when absent). */
function appendAt(root: unknown, path: readonly Step[], text: string): unknown {
  if (path.length === 0) return (typeof root === 'string' ? root : '') + text;
  const [step, ...rest] = path;
  if (typeof step === 'string') {
    const record = isRecord(root) && !Array.isArray(root) ? root : {};
    return { ...record, [step]: appendAt(record[step], rest, text) };
  }
  const items: unknown[] = Array.isArray(root) ? [...root] : [];
  const position = typeof step === 'number' ? step : items.findIndex((item) => isRecord(item) && item.index === step.index);
  if (position === -1 || position >= items.length) items.push(appendAt(typeof step === 'number' ? undefined : { index: step.index }, rest, text));
  else items[position] = appendAt(items[position], rest, text);
  return items;
}
