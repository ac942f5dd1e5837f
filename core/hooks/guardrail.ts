import { type ChainOutcome, runChain } from '../guardrails/chain.js';
import type { ConversationMask } from '../guardrails/slice.js';
import { fieldParameters, fieldTexts, rewriteField, TEXT_FIELDS } from '../guardrails/field-texts.js';
import { chainedRestorer, createOutputJudge } from '../guardrails/output/index.js';
import type { PolicyRegistry } from '../guardrails/registry.js';
import { errors } from '../errors.js';
import type { GatewayContext } from '../pipeline/context.js';
import type { Hook, Next } from '../pipeline/hook.js';
import type { JudgedRequest, OperationHandler } from '../api/operation.js';
import type { CompiledPolicy } from '../guardrails/registry.js';

/**
 * The guardrail stage. The policy is the caller's (`auth.policy`, a virtual key's), else the
 * configured default. Its input chain runs before `next()`: a denial answers 400
 * `guardrail_denied` and nothing goes upstream; a transform rewrites the request. Its output chain
 * is installed as the context's output judge (`core/guardrails/output/`), which the operation applies to the plain answer or
 * to the stream as it flows.
 */
export function guardrailHook(dependencies: {
  policies: PolicyRegistry;
  defaultPolicy?: string;
  /** The unified operations by name: each may declare what its request gives input guardrails to judge. */
  operations: ReadonlyMap<string, OperationHandler>;
}): Hook {
  const { policies, defaultPolicy, operations } = dependencies;

  /** A request a policy applies to: its input judged, its output judge installed. */
  async function guarded(context: GatewayContext, next: Next, name: string): Promise<void> {
    const policy = policies.get(name);
    // Keys are checked against the policies when created; one whose policy was since removed
    // from the configuration is refused rather than served unguarded.
    if (!policy) throw errors.internal('The guardrail policy of this key is not configured.', { code: 'guardrail_policy_missing' });
    context.guardrail!.policy = name;
    context.guardrail!.memo = new Map();
    // A pass-through body is opaque to guardrails: sending it would let a guarded key reach the
    // provider unjudged (issue 14), so it is refused unless the policy opts in.
    if (context.operation === 'passthrough' && policy.passthrough !== 'allow-unjudged') {
      throw errors.permission(
        `Pass-through requests cannot be judged by the guardrail policy that applies to this key, so they are refused. Use a unified operation, or declare passthrough: 'allow-unjudged' on the policy.`,
        { code: 'passthrough_not_judged' },
      );
    }
    if (policy.input.length > 0) await judgeInput(context, policy, operations.get(context.operation));
    // Operations whose answers carry text (chat, text completions) apply it; the others ignore it.
    if (policy.output.length > 0) context.guardrail!.output = createOutputJudge(context, policy);
    await next();
  }

  return {
    name: 'gateway-guardrail',
    stage: 'guardrail',
    // Not async: a request no policy applies to passes straight on, with no promise of this hook's own (issue 21).
    run(context, next) {
      context.guardrail = { verdicts: [] };
      const name = context.auth?.policy ?? defaultPolicy;
      return name === undefined ? next() : guarded(context, next, name);
    },
  };
}

async function judgeInput(context: GatewayContext, policy: CompiledPolicy, operation: OperationHandler | undefined): Promise<void> {
  const { texts, parameters, rewrite } = judgedRequest(context, operation);
  const records = context.guardrail!.verdicts;
  // A conversation's earlier turns may have kept placeholders for this policy's input chain.
  const conversation = operation?.carried ? await operation.carried(context) : undefined;
  const carried = conversation?.policy === policy.name && conversation.steps.length === policy.input.length ? conversation.steps : undefined;
  const outcome = await runChain(
    policy.input,
    {
      side: 'input',
      operation: context.operation,
      model: context.request.model,
      texts,
      metadata: context.metadata,
      parameters,
      partial: false,
    },
    policy.mode,
    (entry) => records.push(entry),
    context.guardrail!.memo,
    carried,
  );
  if (outcome.action === 'deny') {
    // The client is not told which guardrail exists or why, unless the policy says so.
    throw errors.invalidRequest(
      policy.revealReasons ? `The request was refused by the gateway's content policy: ${outcome.reason}` : "The request was refused by the gateway's content policy.",
      { code: 'guardrail_denied' },
    );
  }
  if (outcome.action === 'transform' && rewrite) {
    context.request = { ...context.request, body: rewrite(outcome.texts, outcome.parameters), raw: undefined, rawText: undefined };
    if (outcome.restorers.length > 0) {
      context.guardrail!.restorer = chainedRestorer(outcome.restorers);
      context.guardrail!.conversation = () => conversationMask(policy, outcome);
    }
  }
}

/** What the chain's restorers carry to the conversation's next turn, by chain position; undefined when none carries anything. */
function conversationMask(policy: CompiledPolicy, outcome: ChainOutcome & { action: 'transform' }): ConversationMask | undefined {
  const steps: Array<string | null> = policy.input.map(() => null);
  outcome.restorerSteps.forEach((step, index) => (steps[step] = outcome.restorers[index].carry?.() ?? null));
  return steps.some((step) => step !== null) ? { policy: policy.name, steps } : undefined;
}


/**
 * What input guardrails judge of a request: what its operation declares (chat messages, the
 * Messages and Responses APIs' texts), or the text field of the other operations that have one
 * (completion prompts, embedding and speech inputs, image prompts).
 */
function judgedRequest(context: GatewayContext, operation: OperationHandler | undefined): JudgedRequest {
  if (operation?.judged) return operation.judged(context.request.body);
  const field = TEXT_FIELDS[context.operation];
  if (field === undefined) return { texts: [], parameters: {} };
  const body = context.request.body as Record<string, unknown>;
  return { texts: fieldTexts(body, field), parameters: fieldParameters(body), rewrite: (rewritten, parameters) => rewriteField(body, field, rewritten, parameters) };
}
