import test, { type ExecutionContext } from 'ava';
import { startGateway, type TestGateway } from '../harness.js';
import { ManualClock, quotaChat, quotaSetup, startTpmFake, type TpmFake, untilDepth } from './quota-harness.js';

// A provider's quota shared fairly between teams (docs/limits.md), through the real gateway over
// HTTP, against a fake provider that enforces its own tokens per minute and answers 429 past it.
// The gateway's quota scheduler and the fake read one simulated clock, which the test moves on one
// second at a time once every client's request waits in the queue: minutes of traffic, exactly.

const TPM = 6000;
const QUOTA = { tokens_per_minute: TPM, max_wait_ms: 600_000 };
const CLIENTS = 4;
/** The gateway counts a request for 61 one-second buckets (at least a whole minute): one such cycle is measured. */
const MINUTE = 61;

/** Closed-loop clients of one team (each sends again when answered), counting the tokens served while `meter.on`. */
function clients(gateway: TestGateway, key: string, count: number, meter: { on: boolean; tokens: number }, stop: AbortSignal, failures: string[]): Promise<void>[] {
  return Array.from({ length: count }, async () => {
    while (!stop.aborted) {
      let answer;
      try {
        answer = await quotaChat(gateway, key, {}, stop);
      } catch {
        return; // stopped
      }
      if (answer.status !== 200) {
        failures.push(`${answer.status} ${JSON.stringify(answer.json)}`);
        return;
      }
      if (meter.on) meter.tokens += answer.json.usage.total_tokens;
    }
  });
}

/** Moves the clock on `seconds` seconds, one at a time, each once `waiting` requests wait. */
async function run(t: ExecutionContext, clock: ManualClock, gateway: TestGateway, credentialId: string, waiting: number, seconds: number): Promise<void> {
  for (let second = 0; second < seconds; second++) {
    await untilDepth(t, gateway, credentialId, waiting);
    await clock.advance(1000);
  }
  await untilDepth(t, gateway, credentialId, waiting);
}

/** Starts {@link CLIENTS} clients per team a simulated second apart, so that the window's requests spread over its buckets. */
async function staggered(t: ExecutionContext, gateway: TestGateway, credentialId: string, teams: Array<[string, { on: boolean; tokens: number }]>, stop: AbortSignal, failures: string[]): Promise<Promise<void>[]> {
  const loops: Promise<void>[] = [];
  for (let client = 0; client < CLIENTS; client++) {
    for (const [key, meter] of teams) {
      loops.push(...clients(gateway, key, 1, meter, stop, failures));
      await run(t, clock, gateway, credentialId, loops.length, 1);
    }
  }
  return loops;
}

let gateway: TestGateway;
let clock: ManualClock;
test.before(async () => {
  clock = new ManualClock();
  gateway = await startGateway({}, {}, { quota: { clock } });
});
test.after.always(async () => {
  await gateway?.close();
});

test.serial('team A (weight 1) and team B (weight 3) both saturating: served tokens 1:3 within ±10 %, and the provider never answers its own 429', async (t) => {
  const provider: TpmFake = await startTpmFake(clock, TPM);
  const { credentialId, keys } = await quotaSetup(t, gateway, provider.fake.baseUrl, QUOTA, { a: 1, b: 3 }, 'share');
  const stop = new AbortController();
  const failures: string[] = [];
  const a = { on: false, tokens: 0 };
  const b = { on: false, tokens: 0 };
  const loops = await staggered(t, gateway, credentialId, [[keys.a, a], [keys.b, b]], stop.signal, failures);
  await run(t, clock, gateway, credentialId, 2 * CLIENTS, 60 - 2 * CLIENTS); // a minute to reach the steady state
  a.on = b.on = true;
  await run(t, clock, gateway, credentialId, 2 * CLIENTS, MINUTE); // the minute measured
  a.on = b.on = false;
  stop.abort();
  await Promise.all(loops);
  await provider.fake.close();
  t.log(`served in one simulated minute: team A ${a.tokens}, team B ${b.tokens} tokens (ratio ${(b.tokens / a.tokens).toFixed(2)}), provider's 429s ${provider.refused}`);
  t.deepEqual(failures, []);
  t.is(provider.refused, 0, 'the gateway kept within the provider quota');
  const shareOfA = a.tokens / (a.tokens + b.tokens);
  t.true(Math.abs(shareOfA - 0.25) <= 0.025, `team A got ${(shareOfA * 100).toFixed(1)} % of the tokens (expected 25 % ± 10 %)`);
  t.true(a.tokens + b.tokens >= 0.9 * TPM, `the quota was used (${a.tokens + b.tokens} of ${TPM} tokens)`);
});

test.serial('team A idle: team B gets the whole quota; when A comes back it gets its share back within one window', async (t) => {
  const provider: TpmFake = await startTpmFake(clock, TPM);
  const { credentialId, keys } = await quotaSetup(t, gateway, provider.fake.baseUrl, QUOTA, { a: 1, b: 1 }, 'idle');
  // A sends a little, then nothing: after 5 s it is idle and lends its share.
  t.is((await quotaChat(gateway, keys.a)).status, 200);
  const stop = new AbortController();
  const failures: string[] = [];
  const a = { on: false, tokens: 0 };
  const b = { on: false, tokens: 0 };
  const loops = await staggered(t, gateway, credentialId, [[keys.b, b]], stop.signal, failures);
  await run(t, clock, gateway, credentialId, CLIENTS, 60 - CLIENTS);
  b.on = true;
  await run(t, clock, gateway, credentialId, CLIENTS, MINUTE);
  b.on = false;
  t.log(`team B alone served ${b.tokens} tokens in a simulated minute (quota ${TPM})`);
  t.true(b.tokens >= 0.9 * TPM, `team B got ${b.tokens} of ${TPM} tokens`);

  // A comes back (equal weights): within one window it gets its half back.
  const aStop = new AbortController();
  a.on = b.on = true;
  a.tokens = b.tokens = 0;
  loops.push(...clients(gateway, keys.a, CLIENTS, a, aStop.signal, failures));
  await run(t, clock, gateway, credentialId, 2 * CLIENTS, MINUTE);
  t.log(`in the first window after A came back: team A ${a.tokens}, team B ${b.tokens} tokens`);
  const firstA = a.tokens;
  a.tokens = b.tokens = 0;
  await run(t, clock, gateway, credentialId, 2 * CLIENTS, MINUTE);
  stop.abort();
  aStop.abort();
  await Promise.all(loops);
  await provider.fake.close();
  t.log(`in the second window: team A ${a.tokens}, team B ${b.tokens} tokens`);
  t.true(firstA >= 0.45 * TPM, `within the first window A got ${firstA} tokens, its share is ${TPM / 2}`);
  t.deepEqual(failures, []);
  t.is(provider.refused, 0, 'the gateway kept within the provider quota');
  const shareOfA = a.tokens / (a.tokens + b.tokens);
  t.true(Math.abs(shareOfA - 0.5) <= 0.05, `team A got ${(shareOfA * 100).toFixed(1)} % back (expected 50 % ± 10 %)`);
});
