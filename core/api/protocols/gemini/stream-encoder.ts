import type { GeminiCandidate, GeminiPart, GeminiResponse } from '../../../spec/gemini.js';
import { geminiUsageMetadata } from '../../../spec/gemini.js';
import { isRecord } from '../../../spec/is-record.js';
import type { ChatChunkChoice, ChatCompletionChunk, ErrorBody, Usage } from '../../../spec/unified.js';
import type { StreamEncoder } from '../../stream-relay.js';
import { googleErrorBody } from './errors.js';
import { finishReasonOf, functionCallPart, responseIdOf } from './from-chat.js';

/**
 * How `streamGenerateContent` answers are framed: with `alt=sse`, each `GenerateContentResponse` as
 * one server-sent event (`data: {…}`); without it, one JSON array whose elements arrive as they are
 * produced (`[{…}`, `,\r\n{…}`, …, `]`), as Google streams it.
 */
export class GeminiFraming {
  private started = false;

  constructor(readonly sse: boolean) {}

  frame(value: unknown): string {
    const json = JSON.stringify(value);
    if (this.sse) return `data: ${json}\r\n\r\n`;
    const out = (this.started ? ',\r\n' : '[') + json;
    this.started = true;
    return out;
  }

  close(): string {
    if (this.sse) return '';
    const out = this.started ? ']' : '[]';
    this.started = true;
    return out;
  }

  /** The error that ends a stream that failed after its headers were sent, in Google's error shape. */
  error(error: ErrorBody): string {
    return this.frame(googleErrorBody(error, 500)) + this.close();
  }
}

/** A whole answer as a stream (an upstream that answered a streamed request with one JSON body, a cache hit). */
export const responseAsStream = (response: GeminiResponse, sse: boolean): string => {
  const framing = new GeminiFraming(sse);
  return framing.frame(response) + framing.close();
};

interface PendingCall {
  id?: string;
  name: string;
  arguments: string;
}

/**
 * Encodes a unified chat stream as `streamGenerateContent` pieces: each chunk's text and thoughts as
 * a piece of its candidate; function calls, which Gemini sends whole, are gathered and sent with the
 * candidate's last piece, which also carries its `finishReason` and the usage (the unified stream
 * reports usage after the finish). An output guardrail's denial (`content_filter`) is
 * `finishReason: "SAFETY"`.
 */
export class GeminiStreamEncoder implements StreamEncoder<ChatCompletionChunk> {
  private readonly framing: GeminiFraming;
  private readonly calls = new Map<number, Map<number, PendingCall>>();
  private readonly finished = new Map<number, string>();
  private id?: string;
  private model: string;
  private ended = false;

  /** `thoughts`: whether thought parts are sent (the request asked for them). */
  constructor(
    model: string,
    sse: boolean,
    private readonly thoughts = true,
  ) {
    this.model = model;
    this.framing = new GeminiFraming(sse);
  }

  chunk(chunk: ChatCompletionChunk): string {
    if (this.ended) return '';
    this.id ??= chunk.id;
    if (chunk.model) this.model = chunk.model;
    const candidates: GeminiCandidate[] = [];
    for (const choice of chunk.choices) {
      if (this.finished.has(choice.index)) continue;
      const parts = this.parts(choice);
      if (parts.length > 0) candidates.push({ content: { role: 'model', parts }, index: choice.index });
      if (choice.finish_reason) this.finished.set(choice.index, choice.finish_reason);
    }
    return candidates.length > 0 ? this.framing.frame(this.piece(candidates)) : '';
  }

  end(usage: Usage | undefined): string {
    if (this.ended) return '';
    this.ended = true;
    const indices = new Set([...this.finished.keys(), ...this.calls.keys()]);
    if (indices.size === 0) indices.add(0);
    const candidates: GeminiCandidate[] = [...indices]
      .sort((left, right) => left - right)
      .map((index) => {
        const finish = this.finished.get(index);
        const parts: GeminiPart[] = finish === 'content_filter' ? [] : [...(this.calls.get(index)?.values() ?? [])].map((call) => functionCallPart({ id: call.id, function: call }));
        return { content: { role: 'model', parts }, finishReason: finishReasonOf(finish), index };
      });
    return this.framing.frame({ ...this.piece(candidates), usageMetadata: geminiUsageMetadata(usage) }) + this.framing.close();
  }

  error(error: ErrorBody): string {
    this.ended = true;
    return this.framing.error(error);
  }

  private piece(candidates: GeminiCandidate[]): GeminiResponse {
    return { candidates, modelVersion: this.model, responseId: responseIdOf(this.id) };
  }

  private parts(choice: ChatChunkChoice): GeminiPart[] {
    const parts: GeminiPart[] = [];
    const delta = choice.delta ?? {};
    if (this.thoughts && Array.isArray(delta.content_blocks)) {
      for (const piece of delta.content_blocks as unknown[]) {
        if (!isRecord(piece) || piece.type !== 'thinking') continue;
        const text = typeof piece.text === 'string' ? piece.text : '';
        const signature = typeof piece.signature === 'string' && piece.signature ? piece.signature : undefined;
        if (text || signature) parts.push({ text, thought: true, ...(signature ? { thoughtSignature: signature } : {}) });
      }
    }
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (this.thoughts && typeof reasoning === 'string' && reasoning !== '') parts.push({ text: reasoning, thought: true });
    if (typeof delta.content === 'string' && delta.content !== '') parts.push({ text: delta.content });
    for (const call of delta.tool_calls ?? []) {
      const calls = this.calls.get(choice.index) ?? new Map<number, PendingCall>();
      this.calls.set(choice.index, calls);
      const pending = calls.get(call.index) ?? { name: '', arguments: '' };
      if (call.id) pending.id = call.id;
      if (call.function?.name) pending.name = call.function.name;
      if (call.function?.arguments) pending.arguments += call.function.arguments;
      calls.set(call.index, pending);
    }
    return parts;
  }
}
