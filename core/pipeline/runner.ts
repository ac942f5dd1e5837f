import { BootError, toGatewayError } from '../errors.js';
import type { Hook, Next } from './hook.js';
import { STAGES, type StageName } from '../spec/stage.js';
import type { GatewayContext } from './context.js';

type Composed = (context: GatewayContext) => Promise<void>;

/**
 * The slices each stage has finished writing once its hooks' code before `next()` has run (the
 * ownership table of `docs/architecture.md` says who writes each). In development they are frozen
 * (shallowly) at that moment, so that a later stage's write to one throws instead of landing. The
 * `transform`, `forward` and `log` slices are left open: their stage writes them after `next()`
 * too (usage as a stream flows, `endedAt` when the body is read, the cost).
 */
export const FROZEN_AFTER: Readonly<Record<StageName, readonly (keyof GatewayContext)[]>> = {
  auth: ['key', 'auth', 'routing'],
  guardrail: ['request', 'guardrail'],
  transform: ['cache'],
  forward: ['routed'],
  log: [],
};

/** Freezes the slices of the stages ranked below `stage` (the end of the chain: all), from stage rank `from` on; returns the next rank to freeze from. */
function freezeBefore(context: GatewayContext, from: number, stage: StageName | undefined): number {
  const until = stage === undefined ? STAGES.length : STAGES.indexOf(stage);
  for (let index = from; index < until; index++) {
    for (const slice of FROZEN_AFTER[STAGES[index]]) {
      const value = context[slice];
      if (value !== null && typeof value === 'object') Object.freeze(value);
    }
  }
  return Math.max(from, until);
}

/**
 * Composes hooks into an onion in the spirit of koa-compose: each hook gets a `next` that runs the
 * rest. `next()` called twice is always an error (it would run later hooks twice). In development a
 * hook that resolves while the `next()` it started is still pending (a forgotten `await`) is an
 * error too, because the later hooks would then write the context after this one has returned; and
 * when a stage's hooks have all run their code before `next()`, the slices that stage is done with
 * are frozen ({@link FROZEN_AFTER}), so that a foreign write fails loudly.
 */
export function compose(hooks: readonly Hook[], development: boolean): Composed {
  return (context) => {
    let lastIndex = -1;
    let frozenFrom = 0;
    const dispatch = (index: number): Promise<void> => {
      if (index <= lastIndex) {
        return Promise.reject(new Error(`next() called multiple times in hook "${hooks[index - 1]?.name}"`));
      }
      lastIndex = index;
      const hook = hooks[index];
      if (!development) return hook === undefined ? Promise.resolve() : hook.run(context, () => dispatch(index + 1));
      // The first hook of a later stage (or the chain's end): the stages before it are done.
      const previous = hooks[index - 1]?.stage;
      if (previous !== undefined && previous !== 'log' && hook?.stage !== previous) frozenFrom = freezeBefore(context, frozenFrom, hook?.stage);
      if (hook === undefined) return Promise.resolve();
      let pending = false;
      const next: Next = () => {
        pending = true;
        return dispatch(index + 1).finally(() => {
          pending = false;
        });
      };
      return hook.run(context, next).then(() => {
        if (pending) throw new Error(`hook "${hook.name}" resolved before its next() finished (missing await?)`);
      });
    };
    return dispatch(0);
  };
}

const rank = (stage: StageName): number => STAGES.indexOf(stage);

/**
 * Orders hooks by stage ({@link STAGES}), then within a stage by their `before`/`after` constraints
 * (a stable topological sort: of the hooks free to run next, the first registered goes first).
 * Fails at boot on a constraint naming no hook, a cycle, or a hook placed before one of an earlier
 * stage (or after one of a later stage).
 */
export function orderHooks(hooks: readonly Hook[]): Hook[] {
  const byName = new Map(hooks.map((hook) => [hook.name, hook]));
  /** For each hook, the hooks of its stage that must run first. */
  const predecessors = new Map<Hook, Set<Hook>>(hooks.map((hook) => [hook, new Set<Hook>()]));
  const constrain = (first: Hook, second: Hook): void => {
    if (rank(first.stage) > rank(second.stage)) {
      throw new BootError(
        'HOOK_ORDER_STAGE',
        `hook "${first.name}" (stage ${first.stage}) cannot run before hook "${second.name}" (stage ${second.stage}): stages run in the order ${STAGES.join(', ')}`,
      );
    }
    if (first.stage === second.stage) predecessors.get(second)!.add(first);
  };
  const named = (hook: Hook, name: string): Hook => {
    const other = byName.get(name);
    if (other === undefined) throw new BootError('UNKNOWN_HOOK', `hook "${hook.name}" is ordered relative to "${name}", which no hook is named`);
    return other;
  };
  for (const hook of hooks) {
    for (const name of hook.before ?? []) constrain(hook, named(hook, name));
    for (const name of hook.after ?? []) constrain(named(hook, name), hook);
  }
  const ordered: Hook[] = [];
  for (const stage of STAGES) {
    const pending = hooks.filter((hook) => hook.stage === stage);
    while (pending.length > 0) {
      const index = pending.findIndex((hook) => [...predecessors.get(hook)!].every((first) => ordered.includes(first)));
      if (index === -1) {
        throw new BootError('HOOK_ORDER_CYCLE', `the order of hooks ${pending.map((hook) => `"${hook.name}"`).join(', ')} (stage ${stage}) has a cycle`);
      }
      ordered.push(...pending.splice(index, 1));
    }
  }
  return ordered;
}

/**
 * The stage runner. Hooks are ordered by {@link orderHooks}: by stage, then by their constraints.
 * `run` executes auth → guardrail → transform → forward; `complete` executes the log stage once the
 * response is done. Because `complete` is called by the HTTP layer on every response close, the log
 * stage runs for every request, including ones rejected by validation or by any stage.
 */
export class Pipeline {
  private readonly requestChain: Composed;
  private readonly logChain: Composed;
  private readonly completed = new WeakSet<GatewayContext>();
  readonly hooks: readonly Hook[];

  private readonly onUnexpectedError: (error: unknown, context: GatewayContext) => void;

  constructor(
    hooks: readonly Hook[],
    options: { development: boolean; onUnexpectedError?: (error: unknown, context: GatewayContext) => void },
  ) {
    this.onUnexpectedError = options.onUnexpectedError ?? (() => {});
    const names = new Set<string>();
    for (const hook of hooks) {
      if (!(STAGES as readonly string[]).includes(hook.stage)) {
        throw new BootError(
          'UNKNOWN_STAGE',
          `hook "${hook.name}" names stage "${hook.stage}"; stages are ${STAGES.join(', ')}`,
        );
      }
      if (names.has(hook.name)) throw new BootError('DUPLICATE_HOOK', `two hooks are named "${hook.name}"`);
      names.add(hook.name);
    }
    this.hooks = orderHooks(hooks);
    this.requestChain = compose(
      this.hooks.filter((hook) => hook.stage !== 'log'),
      options.development,
    );
    this.logChain = compose(
      this.hooks.filter((hook) => hook.stage === 'log'),
      options.development,
    );
  }

  /** Runs the request stages. Never throws: a failure is recorded as `context.error`. */
  async run(context: GatewayContext): Promise<void> {
    try {
      await this.requestChain(context);
    } catch (error) {
      context.error = toGatewayError(error);
      if (context.error !== error) this.onUnexpectedError(error, context);
    }
  }

  /** Runs the log stage, at most once per context. Never throws. */
  async complete(context: GatewayContext): Promise<void> {
    if (this.completed.has(context)) return;
    this.completed.add(context);
    try {
      await this.logChain(context);
    } catch (error) {
      // A failing log hook must not take the process down.
      this.onUnexpectedError(error, context);
    }
  }
}
