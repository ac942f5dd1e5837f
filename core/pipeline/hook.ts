import type { StageName } from '../spec/stage.js';
import type { GatewayContext } from './context.js';

/** Calls the rest of the pipeline; resolves when every later hook has finished. */
export type Next = () => Promise<void>;

/**
 * A pipeline hook. Hooks run as an onion (koa-compose style): code before `await next()` runs on
 * the way in, code after it on the way out. A hook writes only its own slice of the context.
 *
 * The log stage is special: its hooks run once the response is complete (for a stream: at its
 * end), for every request, including ones rejected by validation or an earlier stage.
 */
export interface Hook {
  /** Unique among all hooks; a duplicate fails at boot. */
  readonly name: string;
  readonly stage: StageName;
  /**
   * Hooks this one must run before (its code before `next()` first, after `next()` last), by name.
   * Order within a stage comes from these constraints, never from registration order, which only
   * breaks ties. A name no hook has, or an impossible order (a cycle, or a hook of a later stage),
   * fails at boot.
   */
  readonly before?: readonly string[];
  /** Hooks this one must run after, by name; checked like {@link Hook.before}. */
  readonly after?: readonly string[];
  run(context: GatewayContext, next: Next): Promise<void>;
}
