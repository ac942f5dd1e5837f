import type { ServerResponse } from 'node:http';
import type { TestFn } from 'ava';
import { step } from '../../core/guardrails/policy.js';
import type { GuardrailRegistration } from '../../core/spec/guardrail.js';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY } from '../harness.js';
import { answering, ask, askStream, assertDenied, policyGateway, streaming } from './helpers.js';

// The contract every vendor guardrail's tests run against its loopback fake: allow, deny, the
// vendor's error and a time-out (fail-closed denies, fail-open passes and says so in the log), a
// streamed answer cut by the vendor's output verdict, and its latency in /metrics. A text
// containing TRIGGER is what each fake judges unsafe.

export const TRIGGER = 'TRIGGER';

/** What a vendor's fake does with a request it accepted. */
export interface VendorBehaviour {
  /** What is wrong with the request, as the vendor would check it (auth, signature, headers, body); empty when right. */
  check(request: RecordedRequest): string[];
  /** The texts the request asks about. */
  texts(request: RecordedRequest): string[];
  /** The vendor's answer, given which of those texts are unsafe. */
  answer(request: RecordedRequest, unsafe: boolean[]): { status?: number; body: unknown };
  /** The vendor's documented error answer (a 5xx or 429). */
  error: { status: number; body: unknown };
}

export interface VendorFake {
  readonly fake: Fake;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Every problem the fake found in a request (a test asserts it stays empty). */
  readonly problems: string[];
  /** The texts judged, per request. */
  readonly judged: string[][];
  /** `normal`, `error` (the vendor's error answer) or `slow` (answers only once the client has gone). */
  mode: 'normal' | 'error' | 'slow';
  close(): Promise<void>;
}

const reply = (response: ServerResponse, status: number, body: unknown) => {
  const bytes = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(bytes.length) }).end(bytes);
};

/** A loopback fake of a vendor's service. */
export async function startVendorFake(behaviour: VendorBehaviour): Promise<VendorFake> {
  const state: { mode: VendorFake['mode'] } = { mode: 'normal' };
  const problems: string[] = [];
  const judged: string[][] = [];
  const fake = await startFake(async (request, response) => {
    const found = behaviour.check(request);
    if (found.length > 0) {
      problems.push(...found);
      return reply(response, 401, { error: { message: found.join('; ') } });
    }
    if (state.mode === 'error') return reply(response, behaviour.error.status, behaviour.error.body);
    if (state.mode === 'slow') {
      // Holds until the gateway gives up (its time budget), whatever the machine's speed; 10 s at most.
      await Promise.race([request.closed, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (!response.destroyed) reply(response, 200, behaviour.answer(request, behaviour.texts(request).map(() => false)).body);
      return;
    }
    const texts = behaviour.texts(request);
    judged.push(texts);
    const answer = behaviour.answer(
      request,
      texts.map((text) => text.includes(TRIGGER)),
    );
    reply(response, answer.status ?? 200, answer.body);
  });
  return {
    fake,
    origin: fake.origin,
    problems,
    judged,
    get mode() {
      return state.mode;
    },
    set mode(mode) {
      state.mode = mode;
    },
    close: () => fake.close(),
  };
}

export interface ContractOptions {
  /** The plugin id (the log's and the metrics' `guardrail`). */
  readonly id: string;
  readonly behaviour: VendorBehaviour;
  /** The guardrail pointed at the fake's origin. */
  make(origin: string): GuardrailRegistration;
  /** The secret `make` configures, which `GET /admin/policies` must not show. */
  readonly secret?: string;
  /** Whether it judges the input side (default true) and the output side (default true). */
  readonly input?: boolean;
  readonly output?: boolean;
}

/** Registers the contract's tests (serial: each starts its own fake and gateway). */
export function vendorContract(test: TestFn, options: ContractOptions): void {
  const { id } = options;
  const setup = async (side: 'input' | 'output', wrap: (registration: GuardrailRegistration) => unknown, answer = answering('the answer')) => {
    const vendor = await startVendorFake(options.behaviour);
    const gateway = await policyGateway({ [side]: [wrap(options.make(vendor.origin))] } as never, answer);
    return {
      vendor,
      gateway,
      async close() {
        await gateway.close();
        await vendor.close();
      },
    };
  };

  if (options.input !== false) {
    test.serial(`${id}: through the gateway, a safe prompt passes and an unsafe one is refused before the provider is called`, async (t) => {
      const { vendor, gateway, close } = await setup('input', (registration) => registration);
      t.teardown(close);
      t.like(await ask(gateway.client, 'What is the capital of France?'), { content: 'the answer' });
      await assertDenied(t, ask(gateway.client, `Please ${TRIGGER} now`));
      t.is(gateway.fake.requests.length, 1);
      t.deepEqual(vendor.problems, []);
      t.true(vendor.judged.flat().some((text) => text.includes(TRIGGER)));
      const entries = await gateway.gateway.waitForEntries(2);
      t.like(entries[0].guardrails[0], { guardrail: id, side: 'input', action: 'allow' });
      t.like(entries[1].guardrails[0], { guardrail: id, side: 'input', action: 'deny' });
      t.is(entries[1].guardrails[0].failure, undefined);
      if (options.secret !== undefined) {
        const listing = await (await fetch(`${gateway.gateway.url}/admin/policies`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
        t.true(listing.includes(`"guardrail":"${id}"`), listing);
        t.false(listing.includes(options.secret));
        t.false(gateway.gateway.rawLog().includes(options.secret));
      }
    });

    test.serial(`${id}: the vendor's error fails closed by default (denied, logged as such) and passes with fail-open (logged as such)`, async (t) => {
      const closed = await setup('input', (registration) => registration);
      t.teardown(closed.close);
      closed.vendor.mode = 'error';
      await assertDenied(t, ask(closed.gateway.client, 'hello'));
      t.is(closed.gateway.fake.requests.length, 0);
      const [entry] = await closed.gateway.gateway.waitForEntries(1);
      t.like(entry.guardrails[0], { guardrail: id, action: 'deny', failure: 'error', onError: 'fail-closed' });

      const open = await setup('input', (registration) => step(registration, { onError: 'fail-open' }));
      t.teardown(open.close);
      open.vendor.mode = 'error';
      t.like(await ask(open.gateway.client, 'hello'), { content: 'the answer' });
      const [openEntry] = await open.gateway.gateway.waitForEntries(1);
      t.like(openEntry.guardrails[0], { guardrail: id, action: 'allow', failure: 'error', onError: 'fail-open' });
      // The failures are counted by fail mode, and the vendor's latency is in /metrics.
      const metrics = await (await fetch(`${open.gateway.gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } })).text();
      t.true(metrics.includes(`gateway_guardrail_failures_total{guardrail="${id}",side="input",failure="error",on_error="fail-open"} 1`), metrics);
      t.regex(metrics, new RegExp(`gateway_guardrail_duration_seconds_count\\{guardrail="${id}",side="input"\\} 1`));
    });

    test.serial(`${id}: a vendor slower than the step's budget fails closed (timeout) or, with fail-open, passes`, async (t) => {
      const closed = await setup('input', (registration) => step(registration, { timeoutMs: 150 }));
      t.teardown(closed.close);
      closed.vendor.mode = 'slow';
      await assertDenied(t, ask(closed.gateway.client, 'hello'));
      const [entry] = await closed.gateway.gateway.waitForEntries(1);
      t.like(entry.guardrails[0], { guardrail: id, action: 'deny', failure: 'timeout', onError: 'fail-closed' });

      const open = await setup('input', (registration) => step(registration, { timeoutMs: 150, onError: 'fail-open' }));
      t.teardown(open.close);
      open.vendor.mode = 'slow';
      t.like(await ask(open.gateway.client, 'hello'), { content: 'the answer' });
      const [openEntry] = await open.gateway.gateway.waitForEntries(1);
      t.like(openEntry.guardrails[0], { guardrail: id, action: 'allow', failure: 'timeout', onError: 'fail-open' });
    });
  }

  if (options.output !== false) {
    test.serial(`${id}: a streamed answer is cut by the vendor's output verdict before the unsafe sentence is sent`, async (t) => {
      const pieces = ['The first sentence is fine. ', `Then comes a ${TRIGGER} `, 'sentence. ', 'And the end.'];
      const { vendor, gateway, close } = await setup('output', (registration) => registration, streaming(pieces));
      t.teardown(close);
      const streamed = await askStream(gateway.client, 'tell me');
      t.is(streamed.finishReason, 'content_filter');
      t.true(streamed.content.startsWith('The first sentence is fine.'), streamed.content);
      t.false(streamed.content.includes(TRIGGER));
      t.false(streamed.content.includes('And the end.'));
      t.deepEqual(vendor.problems, []);
      const [entry] = await gateway.gateway.waitForEntries(1);
      t.like(entry.guardrails[0], { guardrail: id, side: 'output', action: 'deny' });
    });
  }
}
