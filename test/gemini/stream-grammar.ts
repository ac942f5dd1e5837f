/**
 * A grammar check of a `streamGenerateContent` answer as Google frames it: with `alt=sse`, events of
 * one `data:` line each (no event names, no `[DONE]`), separated by blank lines; without it, one
 * JSON array. Every piece is a `GenerateContentResponse` (candidates with an index and
 * `role: "model"` contents, or a blocked prompt's `promptFeedback`), or Google's error object as the
 * last piece; after a candidate's `finishReason` nothing more comes for it. Throws on any breach;
 * returns the pieces and what they add up to.
 */
export interface CheckedGeminiStream {
  readonly pieces: Array<Record<string, any>>;
  /** Per candidate index: its text, thoughts, function calls and finish reason. */
  readonly candidates: Map<number, { text: string; thoughts: string; functionCalls: Array<Record<string, any>>; finishReason?: string }>;
  readonly usage?: Record<string, number>;
  readonly blockReason?: string;
  readonly error?: { code: number; message: string; status: string };
}

function piecesOf(text: string, framing: 'sse' | 'array'): unknown[] {
  if (framing === 'array') {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed)) throw new Error('a JSON-array stream is not an array');
    return parsed;
  }
  if (text.length > 0 && !/\n\n$|\r\n\r\n$/.test(text)) throw new Error('the SSE stream does not end with a blank line');
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split(/\r?\n/);
      if (lines.length !== 1 || !lines[0].startsWith('data: ')) throw new Error(`an SSE event is not one data line: ${JSON.stringify(block)}`);
      return JSON.parse(lines[0].slice('data: '.length));
    });
}

export function checkGeminiStream(text: string, framing: 'sse' | 'array'): CheckedGeminiStream {
  const pieces = piecesOf(text, framing) as Array<Record<string, any>>;
  if (pieces.length === 0) throw new Error('the stream holds no piece');
  const candidates: CheckedGeminiStream['candidates'] = new Map();
  let usage: Record<string, number> | undefined;
  let blockReason: string | undefined;
  let error: CheckedGeminiStream['error'];
  pieces.forEach((piece, position) => {
    if (typeof piece !== 'object' || piece === null || Array.isArray(piece)) throw new Error(`piece ${position} is not an object`);
    if (error) throw new Error('a piece follows the error');
    if (piece.error) {
      if (typeof piece.error.code !== 'number' || typeof piece.error.message !== 'string' || typeof piece.error.status !== 'string') throw new Error('the error is not in Google\'s shape');
      error = piece.error;
      return;
    }
    if (piece.promptFeedback?.blockReason) blockReason = piece.promptFeedback.blockReason;
    if (piece.usageMetadata) usage = piece.usageMetadata;
    if (piece.candidates === undefined && !piece.promptFeedback && !piece.usageMetadata) throw new Error(`piece ${position} has neither candidates, promptFeedback nor usageMetadata`);
    for (const candidate of piece.candidates ?? []) {
      if (typeof candidate.index !== 'number') throw new Error(`a candidate of piece ${position} has no index`);
      const state = candidates.get(candidate.index) ?? { text: '', thoughts: '', functionCalls: [] };
      candidates.set(candidate.index, state);
      if (state.finishReason) throw new Error(`candidate ${candidate.index} continues after its finishReason`);
      if (candidate.content && candidate.content.role !== 'model') throw new Error(`candidate ${candidate.index}'s content is not the model's`);
      for (const part of candidate.content?.parts ?? []) {
        if (typeof part.text === 'string') {
          if (part.thought) state.thoughts += part.text;
          else state.text += part.text;
        } else if (part.functionCall) {
          if (typeof part.functionCall.name !== 'string' || typeof part.functionCall.args !== 'object') throw new Error('a functionCall without name or args object');
          state.functionCalls.push(part.functionCall);
        } else throw new Error(`an unexpected part: ${JSON.stringify(part)}`);
      }
      if (candidate.finishReason !== undefined) state.finishReason = candidate.finishReason;
    }
  });
  if (!error && !blockReason) {
    if (candidates.size === 0) throw new Error('no candidate in the stream');
    for (const [index, state] of candidates) if (!state.finishReason) throw new Error(`candidate ${index} never finished`);
  }
  return { pieces, candidates, ...(usage ? { usage } : {}), ...(blockReason ? { blockReason } : {}), ...(error ? { error } : {}) };
}
