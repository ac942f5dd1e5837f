import type { GatewayContext } from '../../pipeline/context.js';
import type { GuardrailInput } from '../../spec/guardrail.js';
import { runChain } from '../chain.js';
import type { CompiledPolicy } from '../registry.js';
import { StreamJudge } from './stream-window.js';
import type { AnswerText, ChunkRestoring, OutputJudge, TextChoice } from './types.js';
import { ChunkRestorer, restoreValue } from './restore.js';

export type { AnswerText, ChoiceText, ChunkJudge, ChunkJudgeStep, ChunkRestoring, ChunkText, OutputJudge, TextChoice } from './types.js';
export { chainedRestorer, ChunkRestorer, concealValue, HeldTexts, restoreValue } from './restore.js';

// The guardrail slice's output judge (core/guardrails/slice.ts), declared next to its type by
// module augmentation.
declare module '../slice.js' {
  interface GuardrailSlice {
    /** Installed by the guardrail stage when the policy judges output; the operation applies it. */
    output?: OutputJudge;
  }
}

/**
 * The output side of a policy for one request: the one entry point of output guardrails. The
 * guardrail stage installs it on `context.guardrail.output`; an operation that says where its
 * answer's text is ({@link AnswerText}) hands it a plain answer (`response`), and gives the stream
 * relay its `stream` judge. A plain answer is judged whole: a denial empties every choice's text
 * with `finish_reason: "content_filter"` (Azure OpenAI's precedent, which OpenAI clients handle), a
 * transform rewrites the texts. Streams get a {@link StreamJudge}, a window at a time.
 */
export function createOutputJudge(context: GatewayContext, policy: CompiledPolicy): OutputJudge {
  const records = context.guardrail!.verdicts;
  const memo = context.guardrail!.memo;
  const base: Omit<GuardrailInput, 'texts' | 'partial' | 'side'> = {
    operation: context.operation,
    model: context.request.model,
    metadata: context.metadata,
    parameters: {},
  };
  return {
    async response<Response extends { choices: TextChoice[] }, Chunk extends { choices: TextChoice[] }>(response: Response, text: AnswerText<Response, Chunk>): Promise<Response> {
      const { answer } = text;
      const judged = response.choices.filter((choice) => answer.read(choice) !== undefined);
      if (judged.length === 0) return response;
      const texts = judged.map((choice) => answer.read(choice)!);
      const outcome = await runChain(policy.output, { ...base, side: 'output', texts, partial: false }, policy.mode, (entry) => records.push(entry), memo);
      if (outcome.action === 'allow') return response;
      if (outcome.action === 'deny') return { ...response, choices: response.choices.map((choice) => answer.denied(choice)) };
      const rewritten = new Map(judged.map((choice, index) => [choice, outcome.texts[index]]));
      return { ...response, choices: response.choices.map((choice) => (rewritten.has(choice) ? answer.write(choice, rewritten.get(choice)!) : choice)) };
    },
    stream: <Response extends { choices: TextChoice[] }, Chunk extends { choices: TextChoice[] }>(text: AnswerText<Response, Chunk>) =>
      new StreamJudge<Chunk>(policy, base, records, text.chunk, memo),
  };
}

/**
 * The restorer of a stream of unified chunks (chat, text completions, and the protocols translated
 * from chat) when an input transform of this request returned one.
 */
export function streamRestorer<Chunk extends { choices: TextChoice[] }>(context: GatewayContext): ChunkRestoring<Chunk> | undefined {
  const restorer = context.guardrail?.restorer;
  return restorer ? new ChunkRestorer<Chunk>(restorer) : undefined;
}

/** A whole answer (any protocol's object) restored when an input transform of this request returned a restorer. */
export function restoredAnswer<Answer>(context: GatewayContext, answer: Answer): Answer {
  const restorer = context.guardrail?.restorer;
  return restorer ? restoreValue(answer, restorer) : answer;
}
