import type { ChatCompletionChunk } from '../../spec/unified.js';

/** What an output judge needs of every choice, plain or streamed. */
export interface TextChoice {
  index: number;
  finish_reason?: string | null;
  logprobs?: unknown;
}

/** Reads and writes the judged text of one kind of choice. */
export interface ChoiceText<Choice> {
  /** The choice's text; undefined when it carries none to judge. */
  read(choice: Choice): string | undefined;
  /** A copy with `text` as its text (logprobs dropped when the text changed: they would describe the original). */
  write(choice: Choice, text: string): Choice;
}

/** The streamed side of {@link AnswerText}. */
export interface ChunkText<Chunk extends { choices: TextChoice[] }> extends ChoiceText<Chunk['choices'][number]> {
  /** Whether the choice carries something besides its text (a role, tool calls): then it is sent even with its text held back. */
  carriesMore(choice: Chunk['choices'][number]): boolean;
  /** A choice carrying only `text` (held-back text released when the upstream ends). */
  released(index: number, text: string): Chunk['choices'][number];
  /** A chunk with the identity of `source` whose choices (one per index) end with `finish_reason: "content_filter"`. */
  filtered(source: Chunk | undefined, indices: readonly number[]): Chunk;
}

/**
 * Where an operation's answers keep their text (chat: `message.content` and `delta.content`; text
 * completions: `text`), so that one output judge judges every operation that declares it.
 */
export interface AnswerText<Response extends { choices: TextChoice[] }, Chunk extends { choices: TextChoice[] }> {
  readonly answer: ChoiceText<Response['choices'][number]> & {
    /** The choice denied: its text emptied (as the schema allows) and `finish_reason: "content_filter"`. */
    denied(choice: Response['choices'][number]): Response['choices'][number];
  };
  readonly chunk: ChunkText<Chunk>;
}

/**
 * Judges an answer before the client gets it, without the operation knowing any guardrail: plain
 * answers pass through `response`, streamed ones through a {@link ChunkJudge} that the stream relay
 * applies. The operation says where its text is with an {@link AnswerText}.
 */
export interface OutputJudge {
  /** Returns the answer to send (a denial: every choice {@link AnswerText.answer denied}). */
  response<Response extends { choices: TextChoice[] }, Chunk extends { choices: TextChoice[] }>(response: Response, text: AnswerText<Response, Chunk>): Promise<Response>;
  /** A judge for one stream, which the stream relay applies. */
  stream<Response extends { choices: TextChoice[] }, Chunk extends { choices: TextChoice[] }>(text: AnswerText<Response, Chunk>): ChunkJudge<Chunk>;
}

/**
 * Applied by the stream relay to every chunk that carries choices, before it is written. It may hold
 * text back (and release it with a later chunk), rewrite it, or stop the stream.
 */
export interface ChunkJudge<Chunk = ChatCompletionChunk> {
  push(chunk: Chunk): Promise<ChunkJudgeStep<Chunk>>;
  /** The upstream's stream is complete: what is still held back. */
  end(): Promise<ChunkJudgeStep<Chunk>>;
}

export interface ChunkJudgeStep<Chunk = ChatCompletionChunk> {
  readonly chunks: Chunk[];
  /**
   * The stream must end after these chunks: the relay sends the usage chunk when asked for and
   * known, then `[DONE]`, and cancels the upstream request.
   */
  readonly stop?: boolean;
}

/**
 * Applied by the stream relay to every chunk after the judge: puts back what an input transform
 * took out (masked values), holding back a possible placeholder's start at the end of a text until
 * the next chunk completes or refutes it.
 */
export interface ChunkRestoring<Chunk> {
  push(chunk: Chunk): Chunk;
  /** The upstream's stream is complete: a chunk with what is still held back, if anything. */
  end(): Chunk | undefined;
}
