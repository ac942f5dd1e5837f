/** Tokens added to every request's bound for what a provider's chat template adds around the whole prompt (priming of the reply, begin/end markers). */
export const REQUEST_OVERHEAD_TOKENS = 10;

/**
 * Tokens added when a request defines tools or functions: a provider may render them into a hidden
 * system prompt of its own, billed as input (one documents up to ~530 tokens for it).
 */
export const TOOLS_OVERHEAD_TOKENS = 1024;

/** Request fields that carry conversation text (their binary parts are left out, see {@link binaryPart}). */
const CONVERSATION_FIELDS = ['messages', 'system', 'prompt', 'input', 'instructions', 'contents', 'systemInstruction', 'documents'] as const;
/** Request fields sent to the model as definitions or schemas (counted whole: their keys are text too). */
const DEFINITION_FIELDS = ['tools', 'functions', 'tool_choice', 'function_call', 'response_format', 'text'] as const;

/**
 * Image, audio and file data in a message part: billed by rules of their own (tiles, seconds,
 * pages), not by their bytes, so they are left out of the byte count (docs/virtual-keys.md#limits).
 */
function binaryPart(field: string, value: unknown): boolean {
  if (field === 'image_url' || field === 'input_audio' || field === 'file' || field === 'file_data') return true;
  // A Gemini part's inline bytes or file URI.
  if (field === 'inlineData' || field === 'fileData') return true;
  // A Messages block's `source`: base64, URL or file images and documents; a text or content source is text.
  if (field === 'source' && value !== null && typeof value === 'object') {
    const type = (value as { type?: unknown }).type;
    return type !== 'text' && type !== 'content';
  }
  return false;
}

/**
 * An upper bound on the prompt tokens a provider bills for a request, for cost reservations: the
 * UTF-8 bytes of the request's text-bearing fields as JSON (escapes aside), plus
 * {@link REQUEST_OVERHEAD_TOKENS}, plus {@link TOOLS_OVERHEAD_TOKENS} when tools are defined.
 *
 * Why bytes, and not a token count: the reservation must bound what the provider will bill, and the
 * gateway does not know the provider's tokenizer. A count with one tokenizer (o200k_base) bounds
 * nothing for another: other vocabularies split the same text into more tokens (by a quarter and
 * more for English, several times more for code or non-Latin scripts). What every tokenizer in use
 * shares is that a token stands for at least one byte of the text: byte-level BPE merges bytes, and
 * SentencePiece falls back to single bytes for what its vocabulary lacks (a word-start marker may add
 * one token per word, but it replaces the space byte before the word). So the text's UTF-8 bytes
 * bound its tokens for any of them. The JSON's structure (`{"role":"user","content":...}`, at least
 * 26 bytes per message) bounds the tokens a chat template adds per message (role markers,
 * separators: 3 to 8 tokens); the definitions are counted with their keys, as a provider renders
 * parameter names and types into the prompt. The bound is loose (English text averages about four
 * bytes per token): a budget refuses a large prompt early rather than let a burst spend past it,
 * and the actual usage replaces the reservation when the answer arrives.
 *
 * Not bounded (docs/virtual-keys.md#limits): image, audio and file parts, the earlier turns of a
 * Responses `previous_response_id` (added after admission), and state a provider keeps (a stored
 * prompt template).
 */
export function promptTokensBound(body: unknown): number {
  if (body === null || typeof body !== 'object') return 0;
  const request = body as Record<string, unknown>;
  let bytes = 0;
  for (const field of CONVERSATION_FIELDS) {
    if (request[field] !== undefined) bytes += jsonBytes(request[field], true, 0);
  }
  for (const field of DEFINITION_FIELDS) {
    if (request[field] !== undefined) bytes += jsonBytes(request[field], false, 0);
  }
  // A rerank reads the query beside every document (Voyage counts it once per document).
  if (typeof request.query === 'string') bytes += (Buffer.byteLength(request.query, 'utf8') + 2) * (Array.isArray(request.documents) ? Math.max(1, request.documents.length) : 1);
  const tools = (Array.isArray(request.tools) && request.tools.length > 0) || (Array.isArray(request.functions) && request.functions.length > 0);
  return bytes + REQUEST_OVERHEAD_TOKENS + (tools ? TOOLS_OVERHEAD_TOKENS : 0);
}

/** Documents in one search unit (Cohere's billing: a query with up to 100 documents). */
const DOCUMENTS_PER_SEARCH = 100;

/**
 * The search units a rerank request is expected to bill, for reservations: one per
 * {@link DOCUMENTS_PER_SEARCH} documents. A provider that splits long documents into chunks bills
 * more; the settlement charges what it reports.
 */
export function rerankSearchesBound(body: unknown): number {
  const documents = (body as { documents?: unknown } | null)?.documents;
  return Array.isArray(documents) ? Math.max(1, Math.ceil(documents.length / DOCUMENTS_PER_SEARCH)) : 1;
}

/** Nesting followed by the walk; deeper values are measured with JSON.stringify. */
const MAX_DEPTH = 64;

/**
 * The UTF-8 bytes of `value` as JSON, escapes aside (a string's text counts as its bytes, plus its
 * quotes): what a token bound needs, without building the JSON (a 100 KB conversation serialised and
 * measured took ~0.8 ms, the walk a tenth of that). `skipBinary` leaves out {@link binaryPart}s.
 */
function jsonBytes(value: unknown, skipBinary: boolean, depth: number): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8') + 2;
  if (value === null || typeof value !== 'object') return value === undefined ? 0 : String(value).length;
  if (depth >= MAX_DEPTH) {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch {
      text = undefined;
    }
    return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
  }
  // The brackets, and a comma between entries.
  let bytes = 1;
  if (Array.isArray(value)) {
    for (const item of value) bytes += jsonBytes(item, skipBinary, depth + 1) + 1;
    return Math.max(bytes, 2);
  }
  for (const field in value) {
    const inner = (value as Record<string, unknown>)[field];
    if (inner === undefined || (skipBinary && binaryPart(field, inner))) continue;
    bytes += Buffer.byteLength(field, 'utf8') + 3 + jsonBytes(inner, skipBinary, depth + 1) + 1; // quotes and colon, comma
  }
  return Math.max(bytes, 2);
}

/**
 * The output tokens a request may produce: `max_completion_tokens`, `max_tokens`, (Responses)
 * `max_output_tokens` or (Gemini) `generationConfig.maxOutputTokens`, times `n` (Gemini's
 * `candidateCount`), else the fallback.
 */
export function expectedOutputTokens(body: unknown, fallback: number): { tokens: number; bounded: boolean } {
  const request = (body ?? {}) as Record<string, unknown>;
  const config = (typeof request.generationConfig === 'object' && request.generationConfig !== null ? request.generationConfig : {}) as Record<string, unknown>;
  const limit = [request.max_completion_tokens, request.max_tokens, request.max_output_tokens, config.maxOutputTokens].find((value) => typeof value === 'number' && value >= 0) as number | undefined;
  const count = typeof request.n === 'number' ? request.n : config.candidateCount;
  const choices = typeof count === 'number' && count > 1 ? count : 1;
  return limit === undefined ? { tokens: fallback * choices, bounded: false } : { tokens: limit * choices, bounded: true };
}

/**
 * The tokens a request is counted for in token-per-minute windows at admission: its text at about
 * four bytes a token (a typical rate, not a bound: the window is corrected by the answer's usage)
 * plus the output it may produce (`max_tokens`, else `fallback`).
 */
export function estimatedTokens(body: unknown, fallback: number): number {
  return Math.ceil(promptTokensBound(body) / 4) + expectedOutputTokens(body, fallback).tokens;
}
