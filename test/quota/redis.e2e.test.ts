import { randomBytes } from 'node:crypto';
import test from 'ava';
import { startGateway, type TestGateway } from '../harness.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../vault/vault-harness.js';
import { ManualClock, quotaChat, quotaSetup, queueDepth, startTpmFake } from './quota-harness.js';

// Two gateway instances over real Redis share one provider quota: the window counters are in Redis
// (one script per acquire), each instance keeps its own queue. Both instances and the fake provider
// read one simulated clock, moved on a second at a time once every client's request waits.

const TPM = 6000;
const CLIENTS = 3;
/** The gateway counts a request for 61 one-second buckets (at least a whole minute): one such cycle is measured. */
const MEASURED_SECONDS = 61;
const prefix = `test-quota-${process.pid}-${randomBytes(4).toString('hex')}`;
let available = false;
let a: TestGateway;
let b: TestGateway;
const clock = new ManualClock();

test.before(async () => {
  available = await redisAvailable();
  if (!available) return;
  const environment = { REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') };
  a = await startGateway({}, environment, { quota: { clock } });
  b = await startGateway({}, environment, { quota: { clock } });
});

test.after.always(async () => {
  await a?.close();
  await b?.close();
  if (available) await clearRedisPrefix(prefix);
});

test.serial('two instances on Redis sharing one quota stay within it, and share it 1:3 between teams whose requests come through both', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
  const provider = await startTpmFake(clock, TPM);
  const { credentialId, keys } = await quotaSetup(t, a, provider.fake.baseUrl, { tokens_per_minute: TPM, max_wait_ms: 600_000 }, { light: 1, heavy: 3 }, 'redis');
  const stop = new AbortController();
  const failures: string[] = [];
  const served = { light: 0, heavy: 0 };
  let measuring = false;
  const loops: Promise<void>[] = [];
  let started = 0;
  const allWaiting = async () => {
    const deadline = Date.now() + 5000;
    while ((await queueDepth(a, credentialId)) + (await queueDepth(b, credentialId)) !== started) {
      if (Date.now() > deadline) return t.fail(`never ${started} waiting`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  // The clients start a simulated second apart, so that the window's requests spread over its buckets.
  for (let client = 0; client < CLIENTS; client++) {
    for (const gateway of [a, b]) {
      for (const team of ['light', 'heavy'] as const) {
        started += 1;
        loops.push(
          (async () => {
            while (!stop.signal.aborted) {
              const answer = await quotaChat(gateway, keys[team], {}, stop.signal).catch(() => undefined);
              if (answer === undefined) return;
              if (answer.status !== 200) return void failures.push(`${answer.status} ${JSON.stringify(answer.json)}`);
              if (measuring) served[team] += answer.json.usage.total_tokens;
            }
          })(),
        );
        await allWaiting();
        await clock.advance(1000);
      }
    }
  }
  let peak = 0;
  for (let second = started; second < 60 + MEASURED_SECONDS; second++) {
    await allWaiting();
    peak = Math.max(peak, provider.used());
    if (second === 60) measuring = true;
    await clock.advance(1000);
  }
  await allWaiting();
  measuring = false;
  stop.abort();
  await Promise.all(loops);
  await provider.fake.close();
  t.log(`one simulated minute through two instances: light ${served.light}, heavy ${served.heavy} tokens; the provider's busiest window held ${peak} of ${TPM}; its 429s: ${provider.refused}`);
  t.deepEqual(failures, []);
  t.is(provider.refused, 0, 'the two instances together kept within the provider quota');
  t.true(peak <= TPM);
  const light = served.light / (served.light + served.heavy);
  t.true(Math.abs(light - 0.25) <= 0.025, `the light team got ${(light * 100).toFixed(1)} % (expected 25 % ± 10 %)`);
  t.true(served.light + served.heavy >= 0.9 * TPM, `the quota was used (${served.light + served.heavy} of ${TPM})`);
});

test.serial('two instances on Redis: 200 concurrent requests against 50 per minute (no waiting), exactly 50 reach the provider', async (t) => {
  if (!available) return t.pass('Redis unreachable: skipped (see the printed reason)');
  const provider = await startTpmFake(clock, 1_000_000);
  const { keys } = await quotaSetup(t, a, provider.fake.baseUrl, { requests_per_minute: 50, max_wait_ms: 0 }, { burst: 1 }, 'burst');
  const answers = await Promise.all(Array.from({ length: 200 }, (_, index) => quotaChat(index % 2 ? a : b, keys.burst)));
  const statuses = answers.map((answer) => answer.status);
  await provider.fake.close();
  t.is(statuses.filter((status) => status === 200).length, 50);
  t.is(statuses.filter((status) => status === 429).length, 150);
  t.is(provider.fake.requests.length, 50, 'the provider got exactly its quota');
});
