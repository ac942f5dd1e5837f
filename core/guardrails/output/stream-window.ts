import type { GuardrailRecord, VerdictMemo } from '../slice.js';
import type { GuardrailInput } from '../../spec/guardrail.js';
import { aggregate, runChain } from '../chain.js';
import type { StreamWindow } from '../policy.js';
import type { CompiledPolicy, CompiledStep } from '../registry.js';
import type { ChunkJudge, ChunkJudgeStep, ChunkText, TextChoice } from './types.js';

/** Per-choice state: text held back, and the whole answer so far (for end-of-answer checks). */
interface ChoiceWindow {
  pending: string;
  released: string;
  finished: boolean;
}

const SENTENCE_ENDS = new Set(['.', '!', '?', '。', '！', '？']);

/**
 * Where to cut `text`: everything before the cut is released, the rest held back. Sentence windows
 * release up to the last sentence end (or, past `maxChars` without one, all but `holdChars`);
 * character windows hold back the last `size` characters. A surrogate pair is never split.
 */
export function releasePoint(text: string, window: StreamWindow): number {
  let cut: number;
  if (window.kind === 'chars') {
    cut = Math.max(0, text.length - window.size);
  } else {
    cut = 0;
    for (let index = text.length - 2; index >= 0; index--) {
      const character = text[index];
      if (character === '\n' || (SENTENCE_ENDS.has(character) && /\s/.test(text[index + 1]))) {
        cut = index + 1;
        break;
      }
    }
    if (cut === 0 && text.length > (window.maxChars ?? 400)) cut = text.length - (window.holdChars ?? 64);
  }
  const code = text.charCodeAt(cut - 1);
  if (cut > 0 && code >= 0xd800 && code <= 0xdbff) cut--;
  return cut;
}

/**
 * Judges a streamed answer while it flows. Incremental output guardrails judge the held-back window
 * (with `partial` set until the choice finishes), so a violating span is dropped before any of it
 * is sent and a redaction rewrites spans split across chunks. Guardrails that need the whole answer
 * run when the choice finishes: with `wholeAnswer: 'buffer'` nothing is released before they have
 * judged; with `'after'` their verdict is only logged. A denial ends the stream with a
 * `finish_reason: "content_filter"` chunk. Where a choice's text is comes from the operation's
 * {@link ChunkText} (chat: `delta.content`; text completions: `text`).
 */
export class StreamJudge<Chunk extends { choices: TextChoice[] }> implements ChunkJudge<Chunk> {
  private readonly windows = new Map<number, ChoiceWindow>();
  private readonly incremental: readonly CompiledStep[];
  private readonly whole: readonly CompiledStep[];
  private readonly buffer: boolean;
  private last?: Chunk;
  /** Set when a finished answer was denied: the rest (bar the usage chunk) is dropped. */
  private denied = false;

  constructor(
    private readonly policy: CompiledPolicy,
    private readonly base: Omit<GuardrailInput, 'texts' | 'partial' | 'side'>,
    private readonly records: GuardrailRecord[],
    private readonly text: ChunkText<Chunk>,
    /** The request's verdict memo (identical windows are not judged twice). */
    private readonly memo?: VerdictMemo,
  ) {
    this.incremental = policy.output.filter((compiled) => compiled.manifest.incremental);
    this.whole = policy.output.filter((compiled) => !compiled.manifest.incremental);
    this.buffer = this.whole.length > 0 && policy.wholeAnswer === 'buffer';
  }

  async push(chunk: Chunk): Promise<ChunkJudgeStep<Chunk>> {
    if (this.denied) return { chunks: [] };
    this.last = chunk;
    const choices: Chunk['choices'] = [];
    for (const choice of chunk.choices) {
      let window = this.windows.get(choice.index);
      if (!window) {
        window = { pending: '', released: '', finished: false };
        this.windows.set(choice.index, window);
      }
      const content = this.text.read(choice);
      if (content !== undefined) window.pending += content;
      const final = choice.finish_reason !== null && choice.finish_reason !== undefined;
      const judged = await this.judge(window, final);
      if (judged === undefined) return this.cut(chunk, !final);
      // A choice whose text is all held back is dropped, unless it carries something else.
      if (content !== undefined && judged === '' && !final && !this.text.carriesMore(choice)) continue;
      choices.push(content !== undefined || judged ? this.text.write(choice, judged) : choice);
    }
    return { chunks: choices.length > 0 ? [{ ...chunk, choices }] : [] };
  }

  async end(): Promise<ChunkJudgeStep<Chunk>> {
    if (this.denied) return { chunks: [] };
    const choices: Chunk['choices'] = [];
    for (const [index, window] of this.windows) {
      if (window.finished) continue;
      const judged = await this.judge(window, true);
      if (judged === undefined) return this.cut(this.last, false);
      if (judged) choices.push(this.text.released(index, judged));
    }
    return { chunks: choices.length > 0 && this.last ? [{ ...this.last, choices, usage: null }] : [] };
  }

  /** Judges a window; returns the text to release now, or undefined on denial. */
  private async judge(window: ChoiceWindow, final: boolean): Promise<string | undefined> {
    const record = (entry: GuardrailRecord) => aggregate(this.records, entry);
    // While buffering for whole-answer checks nothing is released, so judging waits for the end.
    if (this.incremental.length > 0 && (final || (!this.buffer && window.pending.length > 0))) {
      const outcome = await runChain(this.incremental, this.input([window.pending], !final), this.policy.mode, record, this.memo);
      if (outcome.action === 'deny') return undefined;
      if (outcome.action === 'transform') window.pending = outcome.texts[0];
    }
    if (!final) {
      if (this.buffer) return '';
      const cut = releasePoint(window.pending, this.policy.window);
      const released = window.pending.slice(0, cut);
      window.pending = window.pending.slice(cut);
      window.released += released;
      return released;
    }
    window.finished = true;
    let answer = window.released + window.pending;
    if (this.whole.length > 0) {
      const outcome = await runChain(this.whole, this.input([answer], false), this.policy.mode, record, this.memo);
      if (this.buffer) {
        if (outcome.action === 'deny') return undefined;
        if (outcome.action === 'transform') answer = outcome.texts[0];
        window.pending = answer;
      }
    }
    const released = window.pending;
    window.released += released;
    window.pending = '';
    return released;
  }

  private input(texts: string[], partial: boolean): GuardrailInput {
    return { ...this.base, side: 'output', texts, partial };
  }

  /**
   * The `content_filter` chunk. Mid-stream the stream stops there (the upstream is cancelled); once
   * the upstream has finished its answer, the rest is read so that the usage chunk still passes.
   */
  private cut(source: Chunk | undefined, stop: boolean): ChunkJudgeStep<Chunk> {
    this.denied = true;
    const indices = this.windows.size > 0 ? [...this.windows.keys()] : [0];
    return { chunks: [this.text.filtered(source, indices)], stop };
  }
}
