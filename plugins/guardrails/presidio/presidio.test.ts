import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { answering, ask, assertDenied, assertRefused, bootError, judge, policyGateway } from '../../../test/guardrails/helpers.js';
import { startVendorFake, TRIGGER, type VendorBehaviour, vendorContract } from '../../../test/guardrails/vendor-contract.js';
import { ACCOUNT_KEY } from '../../../test/harness.js';
import { presidio } from './index.js';

const fixture = (name: string) => JSON.parse(readFileSync(join(process.cwd(), 'plugins/guardrails/presidio/__fixtures__', name), 'utf8'));

/**
 * The analyzer: `{ text, language, entities?, score_threshold? }` → the entities found. This fake finds
 * TRIGGER as an EMAIL_ADDRESS (score 1.0) wherever it is, and the recorded answer's spans on its own text.
 */
const behaviour: VendorBehaviour = {
  check(request) {
    const problems: string[] = [];
    if (request.method !== 'POST' || request.url !== '/analyze') problems.push(`${request.method} ${request.url}`);
    const body = request.json();
    if (typeof body.text !== 'string' || typeof body.language !== 'string') problems.push('text and language');
    if (body.score_threshold !== undefined && typeof body.score_threshold !== 'number') problems.push('score_threshold');
    return problems;
  },
  texts: (request) => [request.json().text],
  answer(request, unsafe) {
    const text: string = request.json().text;
    if (text === RECORDED_TEXT) return { body: fixture('analyze-found.json') };
    if (!unsafe[0]) return { body: [] };
    const start = text.indexOf(TRIGGER);
    return { body: [{ analysis_explanation: null, entity_type: 'EMAIL_ADDRESS', start, end: start + TRIGGER.length, score: 1.0, recognition_metadata: { recognizer_name: 'EmailRecognizer' } }] };
  },
  error: { status: 500, body: fixture('error.json') },
};

/** The text the recorded answer was made for: an e-mail at 8–29, a person at 34–43, a URL inside the e-mail at 18–29. */
const RECORDED_TEXT = 'Contact ana.lopez@example.com, or Ana Lopez.';

vendorContract(test, { id: 'presidio', behaviour, make: (origin) => presidio({ baseUrl: origin }) });

test('params: the analyzer URL is required; thresholds 0-1', (t) => {
  assertRefused(t, presidio({} as never), 'baseUrl');
  assertRefused(t, presidio({ baseUrl: 'http://127.0.0.1:1', scoreThreshold: 1.5 }), '/scoreThreshold');
  assertRefused(t, presidio({ baseUrl: 'http://127.0.0.1:1', entities: ['email'] }), '/entities');
  t.is(bootError(presidio({ baseUrl: 'http://127.0.0.1:1', entities: ['EMAIL_ADDRESS'], thresholds: { PERSON: 0.9 } })), undefined);
});

test.serial('the recorded answer: entities at or above the threshold deny and their values are flagged (for the log to mask)', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  t.deepEqual(await judge(presidio({ baseUrl: vendor.origin }), [RECORDED_TEXT]), {
    action: 'deny',
    reason: 'presidio: EMAIL_ADDRESS, PERSON, URL',
    flagged: ['ana.lopez@example.com', 'Ana Lopez', 'example.com'],
  });
  t.deepEqual(vendor.fake.requests[0].json(), { text: RECORDED_TEXT, language: 'en', score_threshold: 0.5 });
  // Thresholds: 0.9 leaves the person (0.85) and the URL (0.5) out; a per-entity one lowers it for URL.
  t.deepEqual(await judge(presidio({ baseUrl: vendor.origin, scoreThreshold: 0.9 }), [RECORDED_TEXT]), { action: 'deny', reason: 'presidio: EMAIL_ADDRESS', flagged: ['ana.lopez@example.com'] });
  t.deepEqual(await judge(presidio({ baseUrl: vendor.origin, scoreThreshold: 1, thresholds: { EMAIL_ADDRESS: 1, PERSON: 0.95 } }), [RECORDED_TEXT]), {
    action: 'deny',
    reason: 'presidio: EMAIL_ADDRESS',
    flagged: ['ana.lopez@example.com'],
  });
  await judge(presidio({ baseUrl: vendor.origin, scoreThreshold: 0.9, thresholds: { URL: 0.4 }, entities: ['URL', 'EMAIL_ADDRESS'], language: 'es' }), ['hola']);
  t.deepEqual(vendor.fake.requests.at(-1)!.json(), { text: 'hola', language: 'es', score_threshold: 0.4, entities: ['URL', 'EMAIL_ADDRESS'] });
  t.deepEqual(vendor.problems, []);
});

test.serial('while a stream flows, an entity touching the end of the window is left for the next window', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  t.deepEqual(await judge(presidio({ baseUrl: vendor.origin }), [`mail ${TRIGGER}`], { side: 'output', partial: true }), { action: 'allow' });
  t.like(await judge(presidio({ baseUrl: vendor.origin }), [`mail ${TRIGGER}`], { side: 'output', partial: false }), { action: 'deny' });
});

test.serial('the analyzer error is a denial (fail-closed), never a pass: the peers\' regression', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  vendor.mode = 'error';
  const setup = await policyGateway({ input: [presidio({ baseUrl: vendor.origin })] }, answering('ok'));
  t.teardown(() => setup.close());
  await assertDenied(t, ask(setup.client, 'Contact ana.lopez@example.com'));
  t.is(setup.fake.requests.length, 0);
});

test.serial('what Presidio found is masked in the stored request; the rest of the text is kept', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  const setup = await policyGateway({ input: [presidio({ baseUrl: vendor.origin })] }, answering('ok'));
  t.teardown(() => setup.close());
  await assertDenied(t, ask(setup.client, `write to ${TRIGGER} today`));
  await setup.gateway.waitForEntries(1);
  await setup.gateway.gateway.flushLogs();
  const headers = { 'x-gateway-api-key': ACCOUNT_KEY };
  const list = (await (await fetch(`${setup.gateway.url}/admin/logs`, { headers })).json()) as { data: Array<{ id: string }> };
  const detail = await (await fetch(`${setup.gateway.url}/admin/logs/${list.data[0].id}`, { headers })).text();
  t.true(detail.includes('write to [FLAGGED] today'), detail);
  t.false(detail.includes(TRIGGER));
  t.false(setup.gateway.rawLog().includes(TRIGGER));
});
