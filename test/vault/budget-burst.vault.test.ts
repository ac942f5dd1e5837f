import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import test, { type ExecutionContext } from 'ava';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, clearRedisPrefix, createKey, REDIS_URL, redisAvailable } from './vault-harness.js';

/**
 * Issue 31, item 9: a burst of requests against a budget never spends past it when the answers stay
 * within `max_tokens`. The fake reports usage as a provider does: prompt tokens counted with
 * o200k_base plus OpenAI's chat overhead (3 per message, 3 to prime the reply), and every answer as
 * long as `max_tokens` allows (the most a request may cost). It holds every answer until each of the
 * burst's requests has either reached it or been refused, so no settlement frees budget while the
 * burst is admitted, and the number admitted is fixed by the reservation alone.
 */

/** gpt-4o-mini in the shipped catalogue: $0.15 and $0.60 per million tokens, in nano-USD per token. */
const INPUT_NANOS = 150;
const OUTPUT_NANOS = 600;
const BURST = 50;

const billedPromptTokens = (messages: ReadonlyArray<{ role: string; content: string }>): number =>
  messages.reduce((sum, message) => sum + 3 + encode(message.role).length + encode(message.content).length, 3);

/** What one request of `messages` with `max_tokens` is billed at most, in nano-USD. */
const billedNanos = (messages: ReadonlyArray<{ role: string; content: string }>, maxTokens: number): number =>
  billedPromptTokens(messages) * INPUT_NANOS + maxTokens * OUTPUT_NANOS;

/** A provider that reports realistic usage and answers only when `release` is called. */
class HoldingProvider {
  private held: Array<() => void> = [];
  private released = false;

  readonly handler = (request: RecordedRequest, response: ServerResponse): void => {
    const body = request.json();
    const prompt = billedPromptTokens(body.messages);
    const completion = body.max_tokens as number;
    const answer = {
      id: 'chatcmpl-burst',
      object: 'chat.completion',
      created: 1741569952,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi '.repeat(completion).trim() }, logprobs: null, finish_reason: 'length' }],
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    };
    const send = () => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    if (this.released) send();
    else this.held.push(send);
  };

  release(): void {
    this.released = true;
    for (const send of this.held.splice(0)) send();
  }

  hold(): void {
    this.released = false;
  }
}

interface Target {
  readonly a: TestGateway;
  readonly b: TestGateway;
  readonly fake: Fake;
  readonly provider: HoldingProvider;
}

let sequence = 0;

/** Waits until no reservation is left on the key (settlement runs when each response closes). */
async function settledUsage(gateway: TestGateway, id: string): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const usage = (await admin(gateway, 'GET', `/admin/virtual-keys/${id}/usage`)).json;
    if (usage.reserved_usd === 0 || Date.now() > deadline) return usage;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Sends {@link BURST} concurrent requests (alternating between the two handles), releases the
 * provider's answers once every request has reached it or been refused, and returns the statuses,
 * the first refusal's body and the key's settled usage.
 */
async function burst(t: ExecutionContext, target: Target, messages: Array<{ role: string; content: string }>, maxTokens: number, budgetNanos: number) {
  const { a, b, fake, provider } = target;
  const { id, key } = await createKey(t, a, {
    name: `burst-${process.pid}-${++sequence}`,
    provider: 'openai',
    provider_key: 'sk-burst-secret-0123456789abcdef',
    custom_host: fake.baseUrl,
    limits: { budget_usd: budgetNanos / 1e9 },
  });
  provider.hold();
  const reachedBefore = fake.requests.length;
  let refused = 0;
  const requests = Array.from({ length: BURST }, async (_, index) => {
    const response = await fetch(`${(index % 2 ? b : a).url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': key },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages, max_tokens: maxTokens }),
    });
    const json = (await response.json()) as any;
    if (response.status !== 200) refused++;
    return { status: response.status, json };
  });
  const deadline = Date.now() + 20_000;
  while (fake.requests.length - reachedBefore + refused < BURST && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  provider.release();
  const results = await Promise.all(requests);
  const usage = await settledUsage(a, id);
  return { statuses: results.map((result) => result.status), refusal: results.find((result) => result.status !== 200)?.json, usage };
}

function registerBurstCases(serial: (title: string, run: (t: ExecutionContext) => Promise<void>) => void, target: () => Target, label: string): void {
  const cases = [
    // The case: a realistic count for a short prompt is several times its characters / 4.
    { name: 'a short prompt with max_tokens 1', messages: [{ role: 'user', content: 'Say hi' }], maxTokens: 1 },
    {
      name: 'a longer English prompt with max_tokens 10',
      messages: [
        { role: 'system', content: 'You are a helpful assistant who answers in one short sentence.' },
        { role: 'user', content: 'Summarise the plot of a novel about a lighthouse keeper who finds a message in a bottle, without spoilers.' },
      ],
      maxTokens: 10,
    },
  ];
  for (const { name, messages, maxTokens } of cases) {
    serial(`${label}: ${BURST} concurrent requests against a budget 10 such requests exhaust never spend past it (${name})`, async (t) => {
      const costNanos = billedNanos(messages, maxTokens);
      const budgetNanos = 10 * costNanos;
      const { statuses, refusal, usage } = await burst(t, target(), messages, maxTokens, budgetNanos);
      const admitted = statuses.filter((status) => status === 200).length;
      t.is(admitted + statuses.filter((status) => status === 403).length, BURST, `statuses: ${statuses.join(',')}`);
      t.is(refusal?.error?.code, 'budget_exceeded');
      const spentNanos = Math.round(usage.spend_usd.total * 1e9);
      t.log(`admitted ${admitted} of ${BURST}; spent ${spentNanos} of ${budgetNanos} nano-USD (${((100 * spentNanos) / budgetNanos).toFixed(1)} %)`);
      t.true(spentNanos <= budgetNanos, `spent ${spentNanos} nano-USD, past the budget of ${budgetNanos}`);
      t.is(spentNanos, admitted * costNanos, 'each admitted request is charged what the provider reported');
      t.is(usage.reserved_usd, 0);
      // Every admission reserved the same bound, and nothing settled while the burst was admitted:
      // exactly as many as that bound fits in the budget got through.
      const reservationNanos = Math.round(refusal.error.budget.request_estimate_usd * 1e9);
      t.true(reservationNanos >= costNanos, `the reservation ${reservationNanos} is below what the provider bills, ${costNanos}`);
      t.is(admitted, Math.floor(budgetNanos / reservationNanos));
      t.true(admitted >= 1);
    });
  }
}

let embedded: Target | undefined;
let redis: Target | undefined;
const prefix = `test-burst-${process.pid}-${randomBytes(4).toString('hex')}`;
let redisUp = false;

test.before(async () => {
  const provider = new HoldingProvider();
  const fake = await startFake(provider.handler);
  const gateway = await startGateway();
  embedded = { a: gateway, b: gateway, fake, provider };
  redisUp = await redisAvailable();
  if (!redisUp) return;
  const redisProvider = new HoldingProvider();
  const redisFake = await startFake(redisProvider.handler);
  const masterKey = randomBytes(32).toString('hex');
  const environment = () => ({ REDIS_URL, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_MASTER_KEY: masterKey });
  redis = { a: await startGateway({}, environment()), b: await startGateway({}, environment()), fake: redisFake, provider: redisProvider };
});

test.after.always(async () => {
  for (const target of [embedded, redis]) {
    if (!target) continue;
    target.provider.release();
    await target.a.close();
    if (target.b !== target.a) await target.b.close();
    await target.fake.close();
  }
  if (redisUp) await clearRedisPrefix(prefix);
});

registerBurstCases((title, run) => test.serial(title, run), () => embedded!, 'embedded SQLite');
registerBurstCases(
  (title, run) =>
    test.serial(title, async (t) => {
      if (!redisUp) return t.pass('Redis unreachable: skipped (see the printed reason)');
      await run(t);
    }),
  () => redis!,
  'two instances on Redis',
);
