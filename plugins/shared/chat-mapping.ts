import { type ChatRequest, THINKING_BUDGET_BY_EFFORT } from '../../core/spec/provider/index.js';

/**
 * The chat mapping helpers moved into the provider toolkit (`core/spec/provider`, published as
 * `llm-gateway/provider`), so that a provider written outside this repository uses the same ones.
 * They are re-exported here for the plugins that import them from this module; what stays here is
 * specific to one family of upstream APIs.
 */
export {
  blockNumbering,
  completionId,
  type ContentBlock,
  type ContentBlockDelta,
  contentBlockDelta,
  type ChatContentPart as ContentPart,
  contentParts,
  contentText,
  errorBody,
  functionTools,
  hasToolTurns,
  MALFORMED_EVENT,
  nowSeconds,
  parseDataUrl,
  parseEventData,
  readErrorReply,
  requireSingleChoice,
  stopList,
  streamError,
  THINKING_BUDGET_BY_EFFORT,
  thinkingBlocksOf,
  type ToolChoice,
  toolChoiceOf,
  toolInput,
  vectorToBase64,
} from '../../core/spec/provider/index.js';

/**
 * The Claude `thinking` field for a request: its own `thinking`, else one from `reasoning_effort`
 * (disabled for `none`/`minimal`); undefined when the request asks for neither.
 */
export function claudeThinking(request: ChatRequest, defaultBudget: number): { type: 'enabled'; budget_tokens: number } | { type: 'disabled' } | undefined {
  if (request.thinking?.type === 'enabled') return { type: 'enabled', budget_tokens: request.thinking.budget_tokens ?? defaultBudget };
  if (request.thinking?.type === 'disabled') return { type: 'disabled' };
  const budget = typeof request.reasoning_effort === 'string' ? THINKING_BUDGET_BY_EFFORT[request.reasoning_effort] : undefined;
  if (budget === undefined) return undefined;
  return budget > 0 ? { type: 'enabled', budget_tokens: Math.max(budget, defaultBudget) } : { type: 'disabled' };
}

