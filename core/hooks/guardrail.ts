import type { Hook } from '../spec/hook.js';

/**
 * The guardrail stage. Policies (ordered chains of guardrail plugins attached to virtual keys) are
 * not configured yet, so this stage only opens the slice that records verdicts for the log; the
 * input checks will run before `next()` and the output checks after it.
 */
export function guardrailHook(): Hook {
  return {
    name: 'gateway-guardrail',
    stage: 'guardrail',
    async run(context, next) {
      context.guardrail = { verdicts: [] };
      await next();
    },
  };
}
