import test from 'ava';
import { GatewayError } from '../errors.js';
import { HealthChecker, type ProbeSharing, type TargetHealth } from './health.js';
import { parseRoute, type Route } from './route.js';
import { MemoryRoutingState } from './state.js';

// The health checker alone, on a manual clock: probes open the breaker after unhealthy_threshold
// failures and keep it open past the cooldown while they fail, close it after healthy_threshold
// successes, and with a shared lease only its holder probes.

const KEY = 'route:r/targets[0]';

function setup(route: Route, sharing?: ProbeSharing) {
  let now = 1_000_000;
  const state = new MemoryRoutingState({ failures: 5, failureRatio: 0.5, minRequests: 20, windowMs: 60_000, cooldownMs: 30_000 }, () => now);
  let answer: number | Error = 200;
  let sent = 0;
  const checker = new HealthChecker({
    state,
    send: async () => {
      sent++;
      if (answer instanceof Error) throw answer;
      return answer;
    },
    routes: async () => [{ scope: 'route:r', route }],
    now: () => now,
    ...(sharing ? { sharing: () => sharing } : {}),
  });
  return {
    state,
    checker,
    sent: () => sent,
    answer: (next: number | Error) => void (answer = next),
    advance: (ms: number) => void (now += ms),
    health: async () => (await checker.snapshot()).get(KEY),
  };
}

const probed = (check: Record<string, unknown>) =>
  parseRoute({ strategy: { mode: 'fallback' }, targets: [{ name: 'a', provider: 'openai', health_check: { interval_ms: 1000, ...check } }, { name: 'b', provider: 'openai' }] });

test('failed probes open the breaker at the threshold and hold it open past the cooldown; passed probes close it', async (t) => {
  const run = setup(probed({ unhealthy_threshold: 2, healthy_threshold: 2 }));
  await run.checker.tick();
  t.is((await run.health())?.status, 'healthy');
  t.true(run.state.allow(KEY));

  run.answer(503);
  run.advance(1000);
  await run.checker.tick();
  t.is((await run.health())?.consecutiveFailures, 1);
  t.true(run.state.allow(KEY), 'one failure is under the threshold');
  run.advance(1000);
  await run.checker.tick();
  t.like(await run.health(), { status: 'unhealthy', lastStatus: 503, lastError: 'status_503', consecutiveFailures: 2 });
  t.false(run.state.allow(KEY), 'the breaker opened from probes alone');

  // 40 s of failing probes: past the 30 s cooldown, the breaker is still open (each probe opens it again).
  for (let second = 0; second < 40; second++) {
    run.advance(1000);
    await run.checker.tick();
  }
  t.is(run.state.inspect(KEY)?.state, 'open');
  t.false(run.state.allow(KEY));

  run.answer(new GatewayError(504, { message: 'timed out', type: 'upstream_error', param: null, code: 'upstream_timeout' }));
  run.advance(1000);
  await run.checker.tick();
  t.like(await run.health(), { lastError: 'upstream_timeout', lastStatus: undefined });

  run.answer(200);
  run.advance(1000);
  await run.checker.tick();
  t.like(await run.health(), { status: 'unhealthy', consecutiveSuccesses: 1 });
  t.is(run.state.inspect(KEY)?.state, 'open', 'one success is under the healthy threshold');
  run.advance(1000);
  await run.checker.tick();
  t.like(await run.health(), { status: 'healthy', consecutiveSuccesses: 2, consecutiveFailures: 0 });
  t.is(run.state.inspect(KEY)?.state, 'closed');
  t.true(run.state.allow(KEY));
});

test('a probe is sent once per interval, and only to targets with a health check', async (t) => {
  const run = setup(probed({}));
  await run.checker.tick();
  t.is(run.sent(), 1);
  run.advance(500);
  await run.checker.tick();
  t.is(run.sent(), 1, 'not before the interval');
  run.advance(500);
  await run.checker.tick();
  t.is(run.sent(), 2);
  t.deepEqual([...(await run.checker.snapshot()).keys()], [KEY], 'the target without a health check is not probed');
});

test('with a shared lease, only its holder probes; the others read its results', async (t) => {
  const leases = new Map<string, string>();
  const results: Record<string, TargetHealth> = {};
  const sharing: ProbeSharing = {
    lease: async (key, owner) => {
      const holder = leases.get(key) ?? owner;
      leases.set(key, holder);
      return holder === owner;
    },
    publish: async (key, health) => void (results[key] = health),
    all: async () => ({ ...results }),
  };
  const first = setup(probed({ unhealthy_threshold: 1 }), sharing);
  const second = setup(probed({ unhealthy_threshold: 1 }), sharing);
  first.answer(503);
  second.answer(503);
  await first.checker.tick();
  await second.checker.tick();
  t.is(first.sent(), 1);
  t.is(second.sent(), 0, 'the second instance does not hold the lease');
  t.is((await second.health())?.status, 'unhealthy', "it shows the holder's result");
  t.false(first.state.allow(KEY));
});
