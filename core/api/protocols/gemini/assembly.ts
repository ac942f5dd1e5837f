import type { StreamAssembly } from '../../../cache/cacheable.js';
import type { GeminiCandidate, GeminiPart, GeminiResponse } from '../../../spec/gemini.js';
import { isRecord } from '../../../spec/is-record.js';
import type { NativeChunk } from './native.js';

/**
 * A native stream added up to one `GenerateContentResponse` (for the response cache): each
 * candidate's parts in order, consecutive text of the same kind (answer or thought) joined, other
 * parts (function calls) kept whole; the last finish reason, usage, model and id. No answer until
 * every candidate finished.
 */
export class GeminiAssembly implements StreamAssembly<NativeChunk, GeminiResponse> {
  private readonly candidates = new Map<number, GeminiCandidate & { content: { role: string; parts: GeminiPart[] } }>();
  private last: GeminiResponse = {};

  push({ response }: NativeChunk): void {
    const { candidates, ...rest } = response;
    this.last = { ...this.last, ...rest };
    (Array.isArray(candidates) ? candidates : []).forEach((candidate, position) => {
      if (!isRecord(candidate)) return;
      const index = typeof candidate.index === 'number' ? candidate.index : position;
      const whole = this.candidates.get(index) ?? { content: { role: 'model', parts: [] }, index };
      this.candidates.set(index, whole);
      for (const part of Array.isArray(candidate.content?.parts) ? candidate.content.parts : []) this.add(whole.content.parts, part);
      const { content: _content, ...fields } = candidate;
      Object.assign(whole, fields);
    });
  }

  result(): GeminiResponse | undefined {
    if (this.candidates.size === 0 || [...this.candidates.values()].some((candidate) => candidate.finishReason === undefined)) return undefined;
    return { ...this.last, candidates: [...this.candidates.values()].sort((left, right) => Number(left.index) - Number(right.index)) };
  }

  private add(parts: GeminiPart[], part: GeminiPart): void {
    const previous = parts.at(-1);
    const onlyText = (value: GeminiPart) => Object.keys(value).every((key) => key === 'text' || key === 'thought' || key === 'thoughtSignature');
    if (previous && typeof previous.text === 'string' && typeof part.text === 'string' && onlyText(previous) && onlyText(part) && previous.thought === part.thought && previous.thoughtSignature === undefined) {
      parts[parts.length - 1] = { ...previous, ...part, text: previous.text + part.text };
    } else parts.push({ ...part });
  }
}
