import type { AuthSlice, GatewayContext } from '../pipeline/context.js';
import { matchQuery, type RequestFacts } from './conditions.js';
import type { ResolvedRoute, ResolvedTarget } from './plan.js';

/** What a conditional route's rules read about a request: its metadata, model, `user` and caller. */
export function requestFacts(context: GatewayContext): RequestFacts {
  const auth = context.auth!;
  return { metadata: context.metadata, model: context.request.model, user: userOf(context.request.body), callerId: callerId(auth), callerName: callerName(auth) };
}

/**
 * The target a conditional route level takes for these facts: the first condition that matches,
 * else the default; undefined when neither names one. (The route executor runs it, and the
 * response cache keys on it: the target chosen is where the answer comes from.)
 */
export function conditionalTarget(plan: ResolvedRoute, facts: RequestFacts): ResolvedTarget | undefined {
  const strategy = plan.route.strategy;
  if (strategy.mode !== 'conditional') return undefined;
  const match = strategy.conditions.find((condition) => matchQuery(condition.query, facts));
  const name = match?.then ?? strategy.default;
  return plan.targets.find((target) => target.target.name === name);
}

const userOf = (body: unknown): string | undefined => {
  const user = (body as { user?: unknown } | undefined)?.user;
  return typeof user === 'string' ? user : undefined;
};
const callerId = (auth: AuthSlice): string => (auth.caller.type === 'account' ? 'account' : auth.caller.id);
const callerName = (auth: AuthSlice): string | undefined => (auth.caller.type === 'account' ? undefined : auth.caller.name);
