import { type AnswerText, type ChunkRestoring, HeldTexts, restoreValue } from '../../../guardrails/output/index.js';
import type { Restorer } from '../../../spec/guardrail.js';
import type { GeminiCandidate, GeminiPart, GeminiResponse } from '../../../spec/gemini.js';
import { unifiedGeminiUsage } from '../../../spec/gemini.js';
import { isRecord } from '../../../spec/is-record.js';
import type { StreamMapper, StreamStep, UpstreamEvent } from '../../../spec/provider.js';
import type { ErrorBody, Usage } from '../../../spec/unified.js';
import type { StreamEncoder } from '../../stream-relay.js';
import { GeminiFraming } from './stream-encoder.js';

/**
 * One candidate's text as output guardrails read it: its parts' text that is not a thought, joined.
 * `finish_reason` is set when the candidate ends (Google's own reason stays on the candidate).
 */
export interface NativeChoice {
  readonly index: number;
  readonly text?: string;
  readonly finish_reason: string | null;
  readonly logprobs?: unknown;
  /** The candidate as the provider sent it (absent on text released by the judge). */
  readonly candidate?: GeminiCandidate;
}

/** A native `GenerateContentResponse` piece as the stream relay carries it: one choice per candidate. */
export interface NativeChunk {
  readonly response: GeminiResponse;
  readonly choices: NativeChoice[];
  readonly usage?: Usage | null;
  readonly model?: string;
}

const isAnswerText = (part: GeminiPart): boolean => typeof part.text === 'string' && part.thought !== true;

const candidatesOf = (response: GeminiResponse): GeminiCandidate[] => (Array.isArray(response.candidates) ? response.candidates.filter(isRecord) : []);

/** A candidate's choice: the text of its answer parts (undefined when it has none). */
function choiceOf(candidate: GeminiCandidate, position: number): NativeChoice {
  const parts = Array.isArray(candidate.content?.parts) ? candidate.content.parts : [];
  const texts = parts.filter(isAnswerText).map((part) => part.text as string);
  const index = typeof candidate.index === 'number' ? candidate.index : position;
  return { index, ...(texts.length > 0 ? { text: texts.join('') } : {}), finish_reason: candidate.finishReason ? 'stop' : null, candidate };
}

/** Wraps a provider's native stream mapper: each piece becomes a {@link NativeChunk}, with the usage and model it reports. */
export function nativeChunkMapper(mapper: StreamMapper<GeminiResponse>): StreamMapper<NativeChunk> {
  const chunkOf = (response: GeminiResponse): NativeChunk => ({
    response,
    choices: candidatesOf(response).map(choiceOf),
    ...(isRecord(response.usageMetadata) ? { usage: unifiedGeminiUsage(response.usageMetadata) } : {}),
    ...(typeof response.modelVersion === 'string' && response.modelVersion ? { model: response.modelVersion } : {}),
  });
  return {
    map(event: UpstreamEvent): StreamStep<NativeChunk> {
      const step = mapper.map(event);
      return { ...step, chunks: step.chunks?.map(chunkOf) };
    },
  };
}

/**
 * A candidate with `text` as its answer text: the first answer part carries it (its other fields,
 * a thought signature, kept), the other answer parts go; thoughts and function calls stay in place.
 */
function withText(candidate: GeminiCandidate, text: string): GeminiCandidate {
  const parts = Array.isArray(candidate.content?.parts) ? candidate.content.parts : [];
  const out: GeminiPart[] = [];
  let placed = false;
  for (const part of parts) {
    if (!isAnswerText(part)) out.push(part);
    else if (!placed) {
      placed = true;
      if (text !== '' || part.thoughtSignature !== undefined) out.push({ ...part, text });
    }
  }
  if (!placed && text !== '') out.push({ text });
  return { ...candidate, content: { ...candidate.content, role: candidate.content?.role ?? 'model', parts: out } };
}

/** The candidates of a judged piece: each choice's candidate with its judged text; a released text as a candidate of its own. */
function judgedCandidates(choices: readonly NativeChoice[]): GeminiCandidate[] {
  const out: GeminiCandidate[] = [];
  for (const choice of choices) {
    const candidate = choice.candidate ?? { content: { role: 'model', parts: [] }, index: choice.index };
    const judged = choice.text === undefined ? candidate : withText(candidate, choice.text);
    const empty = (judged.content?.parts?.length ?? 0) === 0 && judged.finishReason === undefined;
    if (!empty) out.push(judged);
  }
  return out;
}

/** The piece Google sends when it stops a candidate for safety: no parts, `finishReason: "SAFETY"`. */
const safetyStop = (indices: readonly number[]): GeminiCandidate[] => indices.map((index) => ({ content: { role: 'model', parts: [] }, finishReason: 'SAFETY', index }));

/**
 * Writes native pieces back to the client (SSE or the JSON array) as received, unless output
 * guardrails changed their text: a piece's candidates carry their judged text (a piece left with
 * nothing is not sent), and a denial ends the stream with `finishReason: "SAFETY"`.
 */
export class NativeStreamEncoder implements StreamEncoder<NativeChunk> {
  private readonly framing: GeminiFraming;
  private ended = false;
  private model?: string;

  constructor(sse: boolean) {
    this.framing = new GeminiFraming(sse);
  }

  chunk(chunk: NativeChunk): string {
    if (this.ended) return '';
    if (chunk.model) this.model = chunk.model;
    const denied = chunk.choices.filter((choice) => choice.finish_reason === 'content_filter').map((choice) => choice.index);
    if (denied.length > 0) {
      this.ended = true;
      return this.framing.frame({ candidates: safetyStop(denied), ...(this.model ? { modelVersion: this.model } : {}) }) + this.framing.close();
    }
    const { response } = chunk;
    const unchanged = chunk.choices.length === candidatesOf(response).length && chunk.choices.every((choice) => choice.candidate && choice.text === choiceOf(choice.candidate, choice.index).text);
    if (unchanged) return this.framing.frame(response);
    const candidates = judgedCandidates(chunk.choices);
    const { candidates: _candidates, ...rest } = response;
    if (candidates.length === 0 && Object.keys(rest).length === 0) return '';
    if (candidates.length === 0 && !isRecord(rest.usageMetadata) && !isRecord(rest.promptFeedback)) return '';
    return this.framing.frame({ ...(candidates.length > 0 ? { candidates } : {}), ...rest });
  }

  end(): string {
    if (this.ended) return '';
    this.ended = true;
    return this.framing.close();
  }

  error(error: ErrorBody): string {
    this.ended = true;
    return this.framing.error(error);
  }
}

/** A native answer's candidates as the choices an output judge reads. */
export interface NativeAnswer {
  readonly response: GeminiResponse;
  readonly choices: NativeChoice[];
}

export const nativeAnswerOf = (response: GeminiResponse): NativeAnswer => ({ response, choices: candidatesOf(response).map(choiceOf) });

/** The answer after the judge: a denied candidate has no parts and `finishReason: "SAFETY"`; a rewritten one its new text. */
export function judgedResponse(answer: NativeAnswer): GeminiResponse {
  const candidates = answer.choices.map((choice) => {
    const candidate = choice.candidate ?? { index: choice.index };
    if (choice.finish_reason === 'content_filter') return { ...candidate, content: { role: 'model', parts: [] }, finishReason: 'SAFETY' };
    const unchanged = choice.text === undefined || (choice.candidate !== undefined && choiceOf(choice.candidate, choice.index).text === choice.text);
    return unchanged ? candidate : withText(candidate, choice.text!);
  });
  return candidates.length > 0 ? { ...answer.response, candidates } : answer.response;
}

/** Where native Gemini answers keep their text, for the output judge. */
export const nativeAnswerText: AnswerText<NativeAnswer, NativeChunk> = {
  answer: {
    read: (choice) => choice.text,
    write: (choice, text) => ({ ...choice, text }),
    denied: (choice) => ({ ...choice, text: '', finish_reason: 'content_filter' }),
  },
  chunk: {
    read: (choice) => choice.text,
    write: (choice, text) => ({ ...choice, text }),
    // Thoughts, function calls and a finish reason are sent even while the text is held back.
    carriesMore: (choice) => choice.finish_reason !== null || (choice.candidate?.content?.parts ?? []).some((part) => !isAnswerText(part)),
    released: (index, text) => ({ index, text, finish_reason: null }),
    filtered: (source, indices) => ({
      response: {},
      choices: indices.map((index) => ({ index, finish_reason: 'content_filter' })),
      usage: null,
      ...(source?.model ? { model: source.model } : {}),
    }),
  },
};

/** A candidate whose parts other than its answer text (function calls, their args) have masked values put back. */
function restoredCalls(candidate: GeminiCandidate, restorer: Restorer): GeminiCandidate {
  const parts = candidate.content?.parts;
  if (!Array.isArray(parts)) return candidate;
  let changed = false;
  const restored = parts.map((part) => {
    if (isAnswerText(part)) return part;
    const copy = restoreValue(part, restorer);
    changed ||= copy !== part;
    return copy;
  });
  return changed ? { ...candidate, content: { ...candidate.content, parts: restored } } : candidate;
}

/**
 * Restores native pieces as they flow (after the output judge): each candidate's answer text holds
 * back what may still grow into a placeholder until the candidate's next piece decides, and releases
 * it with the candidate's finish at the latest; a function call (Google sends it whole, in one
 * piece) has its args restored whole.
 */
export function nativeGeminiRestorer(restorer: Restorer | undefined): ChunkRestoring<NativeChunk> | undefined {
  if (!restorer) return undefined;
  const held = new HeldTexts(restorer);
  return {
    push(chunk) {
      const replaced = new Map<GeminiCandidate, GeminiCandidate>();
      let changed = false;
      const choices = chunk.choices.map((choice) => {
        const key = String(choice.index);
        let text = choice.text === undefined ? undefined : held.take(key, choice.text, false);
        if (choice.finish_reason !== null && held.has(key)) {
          const rest = held.flush(key);
          // A candidate the output guardrails cut sends nothing more.
          if (choice.finish_reason !== 'content_filter') text = (text ?? '') + rest;
        }
        const candidate = choice.candidate && restoredCalls(choice.candidate, restorer);
        if (candidate && candidate !== choice.candidate) replaced.set(choice.candidate!, candidate);
        if (text === choice.text && candidate === choice.candidate) return choice;
        changed = true;
        return { ...choice, ...(text === undefined ? {} : { text }), ...(candidate ? { candidate } : {}) };
      });
      if (!changed) return chunk;
      const response = replaced.size === 0 ? chunk.response : { ...chunk.response, candidates: chunk.response.candidates?.map((candidate) => replaced.get(candidate) ?? candidate) };
      return { ...chunk, response, choices };
    },
    end() {
      const keys = held.keys();
      if (keys.length === 0) return undefined;
      return { response: {}, choices: keys.map((key) => ({ index: Number(key), text: held.flush(key), finish_reason: null })), usage: null };
    },
  };
}
