/**
 * The five pipeline stages, in the order a request meets them. Stages are named, never numbered:
 * a hook says which stage it belongs to and the runner orders hooks by this list, then within a
 * stage by the hook names each declares in `before`/`after`.
 */
export const STAGES = ['auth', 'guardrail', 'transform', 'forward', 'log'] as const;

/** One of {@link STAGES}. Registering a hook for any other name fails at boot. */
export type StageName = (typeof STAGES)[number];
