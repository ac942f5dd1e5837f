import test from 'ava';
import { cacheHook } from '../cache/hook.js';
import { bodyCaptureHook } from '../logs/capture.js';
import { Pipeline } from '../pipeline/runner.js';
import type { Hook } from '../pipeline/hook.js';
import { limitHooks } from '../vault/limits.js';
import { authHook } from './auth.js';
import { forwardHook } from './forward.js';
import { guardrailHook } from './guardrail.js';
import { logHook } from './log.js';
import { transformHook } from './transform.js';

/** The built-in hooks as `core/hooks/assemble.ts` registers them (their dependencies are never called here). */
function builtInHooks(): Hook[] {
  const unused = {} as never;
  const limits = limitHooks({ state: () => unused, prices: unused, record: async () => undefined, outputTokenEstimate: 1 });
  return [
    authHook({ registry: unused, accountKey: unused, customHosts: unused }),
    limits.admit,
    bodyCaptureHook({ policy: true, maxBytes: 1 }),
    guardrailHook({ policies: unused, operations: new Map() }),
    cacheHook({ cache: unused, operations: new Map(), embed: unused, clock: unused, logger: unused, price: unused, semanticMaxChars: 1 }),
    transformHook({ operations: new Map() }),
    forwardHook({ operations: new Map(), upstream: unused, memoryBudget: unused, maxAnswerBytes: 1 }),
    limits.settle,
    logHook({ sinks: [] }),
  ];
}

const names = (hooks: readonly Hook[]) => hooks.map((hook) => hook.name);

test('the built-in hooks declare their order: registered in reverse they still run auth first, the cache before the provider mapping and settle before the log', (t) => {
  t.deepEqual(names(new Pipeline(builtInHooks(), { development: false }).hooks), [
    'gateway-auth',
    'virtual-key-limits',
    'gateway-log-capture',
    'gateway-guardrail',
    'gateway-cache',
    'gateway-transform',
    'gateway-forward',
    'virtual-key-settle',
    'gateway-log',
  ]);
  // Limits and capture depend on the auth hook only, not on each other: registration order breaks their tie.
  t.deepEqual(names(new Pipeline(builtInHooks().reverse(), { development: false }).hooks), [
    'gateway-auth',
    'gateway-log-capture',
    'virtual-key-limits',
    'gateway-guardrail',
    'gateway-cache',
    'gateway-transform',
    'gateway-forward',
    'virtual-key-settle',
    'gateway-log',
  ]);
});
