import test, { type ExecutionContext } from 'ava';
import { BootError, errors, GatewayError } from '../errors.js';
import type { Hook } from './hook.js';
import type { StageName } from '../spec/stage.js';
import type { GatewayContext } from './context.js';
import { compose, Pipeline } from './runner.js';

const makeContext = (): GatewayContext => ({
  traceId: 'trace-1',
  startedAt: 0,
  operation: 'chat',
  incoming: { method: 'POST', path: '/v1/chat/completions', search: '', headers: {} },
  signal: new AbortController().signal,
  metadata: {},
  strict: true,
  request: { streaming: false },
});

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A hook that records `<name>:before` and `<name>:after` around `await next()`. */
const onion = (name: string, stage: StageName, trace: string[]): Hook => ({
  name,
  stage,
  async run(_context, next) {
    trace.push(`${name}:before`);
    await next();
    trace.push(`${name}:after`);
  },
});

const hook = (name: string, stage: string, run: Hook['run'] = (_context, next) => next()): Hook => ({ name, stage: stage as StageName, run });

const bootError = (t: ExecutionContext, build: () => unknown, code: BootError['code']): BootError => {
  const error = t.throws(build, { instanceOf: BootError }) as BootError;
  t.is(error.code, code);
  t.true(error.message.startsWith(`${code}: `));
  return error;
};

test('hooks are ordered by stage whatever the registration order; a stage keeps registration order', (t) => {
  const trace: string[] = [];
  const pipeline = new Pipeline(
    [
      onion('log-1', 'log', trace),
      onion('forward-1', 'forward', trace),
      onion('transform-1', 'transform', trace),
      onion('auth-1', 'auth', trace),
      onion('guardrail-1', 'guardrail', trace),
      onion('auth-2', 'auth', trace),
      onion('transform-2', 'transform', trace),
      onion('log-2', 'log', trace),
    ],
    { development: false },
  );
  t.deepEqual(
    pipeline.hooks.map((entry) => entry.name),
    ['auth-1', 'auth-2', 'guardrail-1', 'transform-1', 'transform-2', 'forward-1', 'log-1', 'log-2'],
  );
});

for (const development of [false, true]) {
  test(`run: onion order, log stage excluded (development ${development})`, async (t) => {
    const trace: string[] = [];
    const pipeline = new Pipeline(
      [
        onion('forward', 'forward', trace),
        onion('log', 'log', trace),
        onion('guardrail', 'guardrail', trace),
        onion('auth', 'auth', trace),
        onion('transform', 'transform', trace),
      ],
      { development },
    );
    const context = makeContext();
    await pipeline.run(context);
    t.is(context.error, undefined);
    t.deepEqual(trace, [
      'auth:before',
      'guardrail:before',
      'transform:before',
      'forward:before',
      'forward:after',
      'transform:after',
      'guardrail:after',
      'auth:after',
    ]);
  });
}

test('a hook that does not call next() stops the chain', async (t) => {
  const trace: string[] = [];
  const pipeline = new Pipeline(
    [
      onion('forward', 'forward', trace),
      hook('auth-stop', 'auth', async () => {
        trace.push('auth-stop');
      }),
    ],
    { development: true },
  );
  const context = makeContext();
  await pipeline.run(context);
  t.deepEqual(trace, ['auth-stop']);
  t.is(context.error, undefined);
});

test('unknown stage → BootError UNKNOWN_STAGE naming hook and stage', (t) => {
  const error = bootError(t, () => new Pipeline([hook('ok', 'auth'), hook('mine', 'bogus')], { development: false }), 'UNKNOWN_STAGE');
  t.regex(error.message, /"mine"/);
  t.regex(error.message, /"bogus"/);
  t.regex(error.message, /auth, guardrail, transform, forward, log/);
});

test('stage names are case-sensitive', (t) => {
  bootError(t, () => new Pipeline([hook('upper', 'Auth')], { development: false }), 'UNKNOWN_STAGE');
});

test('duplicate hook name → BootError DUPLICATE_HOOK, also across stages', (t) => {
  const same = bootError(t, () => new Pipeline([hook('twice', 'auth'), hook('twice', 'auth')], { development: false }), 'DUPLICATE_HOOK');
  t.regex(same.message, /"twice"/);
  const across = bootError(t, () => new Pipeline([hook('dup', 'auth'), hook('other', 'log'), hook('dup', 'log')], { development: false }), 'DUPLICATE_HOOK');
  t.regex(across.message, /"dup"/);
});

for (const development of [false, true]) {
  test(`compose: next() called twice rejects and later hooks run once (development ${development})`, async (t) => {
    let later = 0;
    const run = compose(
      [
        hook('greedy', 'auth', async (_context, next) => {
          await next();
          await next();
        }),
        hook('later', 'guardrail', async (_context, next) => {
          later++;
          await next();
        }),
      ],
      development,
    );
    await t.throwsAsync(run(makeContext()), { message: /next\(\) called multiple times in hook "greedy"/ });
    t.is(later, 1);
  });

  test(`Pipeline.run: next() called twice sets context.error (development ${development})`, async (t) => {
    const unexpected: unknown[] = [];
    const pipeline = new Pipeline(
      [
        hook('greedy', 'transform', async (_context, next) => {
          await next();
          await next();
        }),
        hook('end', 'forward'),
      ],
      { development, onUnexpectedError: (error) => unexpected.push(error) },
    );
    const context = makeContext();
    await t.notThrowsAsync(pipeline.run(context));
    t.true(context.error instanceof GatewayError);
    t.is(context.error?.status, 500);
    t.is(unexpected.length, 1);
    t.regex((unexpected[0] as Error).message, /next\(\) called multiple times/);
  });
}

test('compose with no hooks resolves', async (t) => {
  await t.notThrowsAsync(compose([], true)(makeContext()));
  await t.notThrowsAsync(compose([], false)(makeContext()));
});

test('development: a hook that calls next() without awaiting it is reported', async (t) => {
  let laterFinished = false;
  const hooks = [
    hook('forgetful', 'auth', async (_context, next) => {
      void next();
    }),
    hook('slow', 'forward', async () => {
      await delay(20);
      laterFinished = true;
    }),
  ];
  await t.throwsAsync(compose(hooks, true)(makeContext()), { message: /hook "forgetful" resolved before its next\(\) finished \(missing await\?\)/ });
  t.false(laterFinished);

  const unexpected: unknown[] = [];
  const pipeline = new Pipeline(hooks, { development: true, onUnexpectedError: (error) => unexpected.push(error) });
  const context = makeContext();
  await pipeline.run(context);
  t.is(context.error?.status, 500);
  t.is(unexpected.length, 1);
  t.regex((unexpected[0] as Error).message, /forgetful/);
  await delay(40);
});

test('production: a hook that calls next() without awaiting is not reported', async (t) => {
  const hooks = [
    hook('forgetful', 'auth', async (_context, next) => {
      void next();
    }),
    hook('slow', 'forward', async () => {
      await delay(20);
    }),
  ];
  await t.notThrowsAsync(compose(hooks, false)(makeContext()));
  await delay(40);
});

test('development: awaiting next() is not reported', async (t) => {
  const hooks = [
    hook('careful', 'auth', async (_context, next) => {
      await next();
    }),
    hook('slow', 'forward', async () => {
      await delay(5);
    }),
  ];
  await t.notThrowsAsync(compose(hooks, true)(makeContext()));
});

test('the log stage runs only via complete, exactly once per context', async (t) => {
  let logs = 0;
  let forwards = 0;
  const pipeline = new Pipeline(
    [
      hook('log', 'log', async (_context, next) => {
        logs++;
        await next();
      }),
      hook('forward', 'forward', async (_context, next) => {
        forwards++;
        await next();
      }),
    ],
    { development: true },
  );
  const context = makeContext();
  await pipeline.run(context);
  t.is(forwards, 1);
  t.is(logs, 0);
  await pipeline.complete(context);
  t.is(logs, 1);
  t.is(forwards, 1);
  await pipeline.complete(context);
  t.is(logs, 1);
  await Promise.all([pipeline.complete(context), pipeline.complete(context)]);
  t.is(logs, 1);

  const other = makeContext();
  await Promise.all([pipeline.complete(other), pipeline.complete(other)]);
  t.is(logs, 2);
});

test('log hooks see the context the request stages wrote', async (t) => {
  let seen: GatewayError | undefined;
  const failure = errors.rateLimited('slow down');
  const pipeline = new Pipeline(
    [
      hook('log', 'log', async (context, next) => {
        seen = context.error;
        await next();
      }),
      hook('auth', 'auth', async () => {
        throw failure;
      }),
    ],
    { development: true },
  );
  const context = makeContext();
  await pipeline.run(context);
  await pipeline.complete(context);
  t.is(seen, failure);
});

test('a failing log hook never makes complete throw; it is reported', async (t) => {
  const unexpected: Array<{ error: unknown; context: GatewayContext }> = [];
  const boom = new Error('sink down');
  const pipeline = new Pipeline(
    [
      hook('log', 'log', async () => {
        throw boom;
      }),
    ],
    { development: true, onUnexpectedError: (error, context) => unexpected.push({ error, context }) },
  );
  const context = makeContext();
  await t.notThrowsAsync(pipeline.complete(context));
  t.is(unexpected.length, 1);
  t.is(unexpected[0].error, boom);
  t.is(unexpected[0].context, context);
  t.is(context.error, undefined);
});

test('a GatewayError thrown by a hook becomes context.error unchanged', async (t) => {
  const unexpected: unknown[] = [];
  const failure = errors.permission('no', { code: 'denied', headers: { 'retry-after': '1' } });
  const trace: string[] = [];
  const pipeline = new Pipeline(
    [
      onion('auth', 'auth', trace),
      hook('guard', 'guardrail', async () => {
        throw failure;
      }),
      onion('forward', 'forward', trace),
    ],
    { development: true, onUnexpectedError: (error) => unexpected.push(error) },
  );
  const context = makeContext();
  await t.notThrowsAsync(pipeline.run(context));
  t.is(context.error, failure);
  t.is(context.error?.status, 403);
  t.deepEqual(unexpected, []);
  t.deepEqual(trace, ['auth:before']);
});

test('a plain Error thrown by a hook becomes a 500 and onUnexpectedError is called', async (t) => {
  const unexpected: Array<{ error: unknown; context: GatewayContext }> = [];
  const boom = new TypeError('secret internal detail');
  const pipeline = new Pipeline(
    [
      hook('forward', 'forward', async () => {
        throw boom;
      }),
    ],
    { development: false, onUnexpectedError: (error, context) => unexpected.push({ error, context }) },
  );
  const context = makeContext();
  await t.notThrowsAsync(pipeline.run(context));
  t.true(context.error instanceof GatewayError);
  t.is(context.error?.status, 500);
  t.like(context.error?.toJSON(), { error: { type: 'api_error', code: 'internal_error', param: null } });
  t.false(context.error?.message.includes('secret'));
  t.is(unexpected.length, 1);
  t.is(unexpected[0].error, boom);
  t.is(unexpected[0].context, context);
});

test('a non-Error thrown value also becomes a 500', async (t) => {
  const unexpected: unknown[] = [];
  const pipeline = new Pipeline(
    [
      hook('auth', 'auth', async () => {
        throw 'a string';
      }),
    ],
    { development: true, onUnexpectedError: (error) => unexpected.push(error) },
  );
  const context = makeContext();
  await pipeline.run(context);
  t.is(context.error?.status, 500);
  t.deepEqual(unexpected, ['a string']);
});

test('an error thrown after next() is recorded too, after later hooks finished', async (t) => {
  const trace: string[] = [];
  const failure = errors.badGateway('late');
  const pipeline = new Pipeline(
    [
      hook('auth', 'auth', async (_context, next) => {
        await next();
        throw failure;
      }),
      onion('forward', 'forward', trace),
    ],
    { development: true },
  );
  const context = makeContext();
  await pipeline.run(context);
  t.deepEqual(trace, ['forward:before', 'forward:after']);
  t.is(context.error, failure);
});

test('without onUnexpectedError a plain error still becomes a 500', async (t) => {
  const pipeline = new Pipeline(
    [
      hook('auth', 'auth', async () => {
        throw new Error('x');
      }),
    ],
    { development: true },
  );
  const context = makeContext();
  await t.notThrowsAsync(pipeline.run(context));
  t.is(context.error?.status, 500);
});

const ordered = (hook: Hook, order: { before?: string[]; after?: string[] }): Hook => ({ ...hook, ...order });

test('before/after order hooks within a stage whatever their registration order; ties keep registration order', (t) => {
  const trace: string[] = [];
  const pipeline = new Pipeline(
    [
      ordered(onion('settle', 'log', trace), { before: ['log'] }),
      onion('log', 'log', trace),
      ordered(onion('limits', 'auth', trace), { after: ['auth'] }),
      ordered(onion('capture', 'auth', trace), { after: ['auth'] }),
      onion('auth', 'auth', trace),
      ordered(onion('late', 'log', trace), { after: ['log'] }),
      ordered(onion('first', 'auth', trace), { before: ['auth', 'limits'] }),
    ],
    { development: false },
  );
  t.deepEqual(
    pipeline.hooks.map((entry) => entry.name),
    ['first', 'auth', 'limits', 'capture', 'settle', 'log', 'late'],
  );
});

test('a constraint on a hook of an earlier or later stage is satisfied by the stage order, or fails at boot', (t) => {
  const pipeline = new Pipeline([ordered(hook('guard', 'guardrail'), { after: ['auth'], before: ['log'] }), hook('log', 'log'), hook('auth', 'auth')], { development: false });
  t.deepEqual(
    pipeline.hooks.map((entry) => entry.name),
    ['auth', 'guard', 'log'],
  );
  const error = bootError(t, () => new Pipeline([ordered(hook('guard', 'guardrail'), { before: ['auth'] }), hook('auth', 'auth')], { development: false }), 'HOOK_ORDER_STAGE');
  t.regex(error.message, /"guard".*"auth"/);
  bootError(t, () => new Pipeline([hook('guard', 'guardrail'), ordered(hook('auth', 'auth'), { after: ['guard'] })], { development: false }), 'HOOK_ORDER_STAGE');
});

test('a constraint naming no hook → BootError UNKNOWN_HOOK naming both', (t) => {
  const error = bootError(t, () => new Pipeline([ordered(hook('limits', 'auth'), { after: ['gateway-auth'] })], { development: false }), 'UNKNOWN_HOOK');
  t.regex(error.message, /"limits".*"gateway-auth"/);
  bootError(t, () => new Pipeline([ordered(hook('settle', 'log'), { before: ['gateway-log'] })], { development: false }), 'UNKNOWN_HOOK');
});

test('a cycle of constraints → BootError HOOK_ORDER_CYCLE naming the hooks', (t) => {
  const error = bootError(
    t,
    () =>
      new Pipeline(
        [ordered(hook('a', 'auth'), { before: ['b'] }), ordered(hook('b', 'auth'), { before: ['c'] }), ordered(hook('c', 'auth'), { before: ['a'] }), hook('d', 'auth')],
        { development: false },
      ),
    'HOOK_ORDER_CYCLE',
  );
  t.regex(error.message, /"a", "b", "c"/);
  bootError(t, () => new Pipeline([ordered(hook('self', 'log'), { after: ['self'] })], { development: false }), 'HOOK_ORDER_CYCLE');
});
