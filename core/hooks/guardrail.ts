import { runChain } from '../guardrails/chain.js';
import { requestParameters, requestTexts, rewriteRequest } from '../guardrails/chat-texts.js';
import { outputFilter } from '../guardrails/output-filter.js';
import type { PolicyRegistry } from '../guardrails/registry.js';
import { errors } from '../errors.js';
import type { GatewayContext } from '../pipeline/context.js';
import type { Hook } from '../spec/hook.js';
import type { ChatRequest } from '../spec/unified.js';
import type { CompiledPolicy } from '../guardrails/registry.js';

/**
 * The guardrail stage. The policy is the caller's (`auth.policy`, a virtual key's), else the
 * configured default. Its input chain runs before `next()`: a denial answers 400
 * `guardrail_denied` and nothing goes upstream; a transform rewrites the request. Its output chain
 * is installed as the context's output filter, which the operation applies to the plain answer or
 * to the stream as it flows.
 */
export function guardrailHook(dependencies: { policies: PolicyRegistry; defaultPolicy?: string }): Hook {
  const { policies, defaultPolicy } = dependencies;
  return {
    name: 'gateway-guardrail',
    stage: 'guardrail',
    async run(context, next) {
      context.guardrail = { verdicts: [] };
      const name = context.auth?.policy ?? defaultPolicy;
      if (name === undefined) return next();
      const policy = policies.get(name);
      // Keys are checked against the policies when created; one whose policy was since removed
      // from the configuration is refused rather than served unguarded.
      if (!policy) throw errors.internal('The guardrail policy of this key is not configured.', { code: 'guardrail_policy_missing' });
      context.guardrail.policy = name;
      if (policy.input.length > 0) await judgeInput(context, policy);
      if (policy.output.length > 0 && context.operation === 'chat') context.guardrail.output = outputFilter(context, policy);
      await next();
    },
  };
}

async function judgeInput(context: GatewayContext, policy: CompiledPolicy): Promise<void> {
  const chat = context.operation === 'chat' ? (context.request.body as ChatRequest) : undefined;
  const { texts, slots } = chat ? requestTexts(chat) : { texts: [], slots: [] };
  const records = context.guardrail!.verdicts;
  const outcome = await runChain(
    policy.input,
    {
      side: 'input',
      operation: context.operation,
      model: context.request.model,
      texts,
      metadata: context.metadata,
      parameters: chat ? requestParameters(chat) : {},
      partial: false,
    },
    policy.mode,
    (entry) => records.push(entry),
  );
  if (outcome.action === 'deny') {
    // The client is not told which guardrail exists or why, unless the policy says so.
    throw errors.invalidRequest(
      policy.revealReasons ? `The request was refused by the gateway's content policy: ${outcome.reason}` : "The request was refused by the gateway's content policy.",
      { code: 'guardrail_denied' },
    );
  }
  if (outcome.action === 'transform' && chat) {
    const body = rewriteRequest(chat, slots, outcome.texts, outcome.parameters);
    context.request = { ...context.request, body, raw: undefined };
  }
}
