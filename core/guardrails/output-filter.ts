import type { GatewayContext, OutputFilter } from '../pipeline/context.js';
import type { GuardrailInput } from '../spec/guardrail.js';
import type { ChatResponse } from '../spec/unified.js';
import { runChain } from './chain.js';
import type { CompiledPolicy } from './registry.js';
import { StreamJudge } from './stream-window.js';

/**
 * The output side of a policy for one request. A plain answer is judged whole: a denial becomes
 * `content: null` with `finish_reason: "content_filter"` on every choice (Azure OpenAI's precedent,
 * which OpenAI clients handle), a transform rewrites the contents. Streams get a {@link StreamJudge}.
 */
export function outputFilter(context: GatewayContext, policy: CompiledPolicy): OutputFilter {
  const records = context.guardrail!.verdicts;
  const base: Omit<GuardrailInput, 'texts' | 'partial' | 'side'> = {
    operation: context.operation,
    model: context.request.model,
    metadata: context.metadata,
    parameters: {},
  };
  return {
    async response(response: ChatResponse): Promise<ChatResponse> {
      const judged = response.choices.filter((choice) => typeof choice.message?.content === 'string');
      if (judged.length === 0) return response;
      const texts = judged.map((choice) => choice.message.content as string);
      const outcome = await runChain(policy.output, { ...base, side: 'output', texts, partial: false }, policy.mode, (entry) => records.push(entry));
      if (outcome.action === 'allow') return response;
      if (outcome.action === 'deny') {
        return {
          ...response,
          choices: response.choices.map((choice) => ({ ...choice, message: { ...choice.message, content: null }, finish_reason: 'content_filter' })),
        };
      }
      const rewritten = new Map(judged.map((choice, index) => [choice, outcome.texts[index]]));
      return {
        ...response,
        choices: response.choices.map((choice) => (rewritten.has(choice) ? { ...choice, message: { ...choice.message, content: rewritten.get(choice)! } } : choice)),
      };
    },
    stream: () => new StreamJudge(policy, base, records),
  };
}
