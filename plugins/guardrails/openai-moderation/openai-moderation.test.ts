import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startVendorFake, TRIGGER, type VendorBehaviour, vendorContract } from '../../../test/guardrails/vendor-contract.js';
import { answering, ask, assertDenied, assertRefused, bootError, judge, policyGateway } from '../../../test/guardrails/helpers.js';
import { startGateway } from '../../../test/harness.js';
import { BATCH, deniedCategories, openaiModeration } from './index.js';

const API_KEY = 'sk-moderation-test-0123456789';
const fixture = (name: string) => JSON.parse(readFileSync(join(process.cwd(), 'plugins/guardrails/openai-moderation/__fixtures__', name), 'utf8'));

/** OpenAI's moderation endpoint: Bearer auth, `{ model, input: string[] }`, one result per input, in order. */
const behaviour: VendorBehaviour = {
  check(request) {
    const problems: string[] = [];
    if (request.method !== 'POST' || request.url !== '/v1/moderations') problems.push(`${request.method} ${request.url}`);
    if (request.headers.authorization !== `Bearer ${API_KEY}`) problems.push('authorization');
    if (!String(request.headers['content-type']).startsWith('application/json')) problems.push('content-type');
    const body = request.json();
    if (typeof body.model !== 'string') problems.push('model');
    if (!Array.isArray(body.input) || !body.input.every((text: unknown) => typeof text === 'string')) problems.push('input');
    return problems;
  },
  texts: (request) => request.json().input,
  answer: (_request, unsafe) => ({
    body: { ...fixture('clean.json'), results: unsafe.map((flagged) => fixture(flagged ? 'flagged.json' : 'clean.json').results[0]) },
  }),
  error: { status: 500, body: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } } },
};

vendorContract(test, { id: 'openai-moderation', secret: API_KEY, behaviour, make: (origin) => openaiModeration({ baseUrl: `${origin}/v1`, apiKey: API_KEY }) });

test('params: a secret as apiKey or credential (one of them), thresholds between 0 and 1', (t) => {
  assertRefused(t, openaiModeration({ baseUrl: 'http://127.0.0.1:1/v1' }), 'apiKey or credential');
  assertRefused(t, openaiModeration({ apiKey: API_KEY, credential: 'cred_x' }), 'not both');
  assertRefused(t, openaiModeration({ apiKey: API_KEY, thresholds: { violence: 2 } }), '/thresholds');
  assertRefused(t, openaiModeration({ apiKey: API_KEY, baseUrl: 'ftp://x' }), '/baseUrl');
  t.is(bootError(openaiModeration({ apiKey: API_KEY, thresholds: { violence: 0.5 }, categories: ['violence'] })), undefined);
});

test.serial('the request carries every distinct text once; the recorded answers map to allow and deny by category', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  const guardrail = openaiModeration({ baseUrl: `${vendor.origin}/v1/`, apiKey: API_KEY, model: 'omni-moderation-2024-09-26' });
  t.deepEqual(await judge(guardrail, ['hello', 'hello', '', 'world']), { action: 'allow' });
  t.deepEqual(vendor.judged, [['hello', 'world']]);
  t.is(vendor.fake.requests[0].json().model, 'omni-moderation-2024-09-26');
  t.deepEqual(await judge(guardrail, ['fine', `a ${TRIGGER}`]), { action: 'deny', reason: 'openai-moderation: violence' });
  // Nothing to judge: no call.
  t.deepEqual(await judge(guardrail, ['', '  ']), { action: 'allow' });
  t.is(vendor.fake.requests.length, 2);
  t.deepEqual(vendor.problems, []);
});

test.serial('thresholds on category_scores decide instead of the service flag; categories limit what counts', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  const base = { baseUrl: `${vendor.origin}/v1`, apiKey: API_KEY };
  // The clean answer scores violence 0.3384: under 0.3 it denies, over 0.5 it does not.
  t.deepEqual(await judge(openaiModeration({ ...base, thresholds: { violence: 0.3 } }), ['calm']), { action: 'deny', reason: 'openai-moderation: violence' });
  t.deepEqual(await judge(openaiModeration({ ...base, thresholds: { violence: 0.5 } }), ['calm']), { action: 'allow' });
  // The flagged answer scores violence 0.9213: a threshold above it allows, a category list without it ignores it.
  t.deepEqual(await judge(openaiModeration({ ...base, thresholds: { violence: 0.95 } }), [TRIGGER]), { action: 'allow' });
  t.deepEqual(await judge(openaiModeration({ ...base, categories: ['hate', 'sexual'] }), [TRIGGER]), { action: 'allow' });
  t.deepEqual(await judge(openaiModeration({ ...base, threshold: 0.04 }), [TRIGGER]), { action: 'deny', reason: 'openai-moderation: harassment, violence' });
  t.deepEqual(vendor.problems, []);
});

test.serial('a conversation longer than one batch goes in several calls; a flag in any batch denies', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  const texts = Array.from({ length: BATCH * 2 + 1 }, (_, index) => `message ${index}`);
  t.deepEqual(await judge(openaiModeration({ baseUrl: `${vendor.origin}/v1`, apiKey: API_KEY }), texts), { action: 'allow' });
  t.deepEqual(vendor.judged.map((batch) => batch.length).sort(), [1, BATCH, BATCH]);
  texts[BATCH * 2] = TRIGGER;
  t.like(await judge(openaiModeration({ baseUrl: `${vendor.origin}/v1`, apiKey: API_KEY }), texts), { action: 'deny' });
  t.deepEqual(vendor.problems, []);
});

test('deniedCategories: flag, per-category threshold, shared threshold', (t) => {
  const result = { categories: { hate: true, violence: false }, category_scores: { hate: 0.2, violence: 0.7 } };
  t.deepEqual(deniedCategories(result, {}), ['hate']);
  t.deepEqual(deniedCategories(result, { thresholds: { hate: 0.5 } }), []);
  t.deepEqual(deniedCategories(result, { threshold: 0.6 }), ['violence']);
  t.deepEqual(deniedCategories(result, { thresholds: { hate: 0.1 }, threshold: 0.9 }), ['hate']);
});

test.serial('an answer that is not the documented shape is a failure (fail-closed), not an allow', async (t) => {
  const vendor = await startVendorFake({ ...behaviour, answer: () => ({ body: { results: [] } }) });
  t.teardown(() => vendor.close());
  const error = await t.throwsAsync(judge(openaiModeration({ baseUrl: `${vendor.origin}/v1`, apiKey: API_KEY }), ['x']));
  t.is(error?.message, 'openai-moderation: answer has no results for the texts sent');
  vendor.mode = 'error';
  const failed = await t.throwsAsync(judge(openaiModeration({ baseUrl: `${vendor.origin}/v1`, apiKey: API_KEY }), ['x']));
  t.is(failed?.message, 'openai-moderation: answered HTTP 500');
  t.false(failed!.message.includes(API_KEY));
});

test.serial('the secret read from a stored vault credential, by id, when the check runs; a rotation applies from the next check', async (t) => {
  let expectedKey = API_KEY;
  const vendor = await startVendorFake({
    ...behaviour,
    check: (request) => [
      ...behaviour.check(request).filter((problem) => problem !== 'authorization'),
      ...(request.headers.authorization === `Bearer ${expectedKey}` ? [] : ['authorization']),
    ],
  });
  t.teardown(() => vendor.close());
  // A first boot stores the credential; the second, on the same data directory, names it in its policy.
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-test-'));
  const first = await startGateway({}, { GATEWAY_DATA_DIR: dataDir });
  const stored = await first.gateway.vault.credentials.create({ name: 'moderation', secret: { api_key: API_KEY } });
  await first.close();
  const setup = await policyGateway({ input: [openaiModeration({ baseUrl: `${vendor.origin}/v1`, credential: stored.id })] }, answering('ok'), {}, { GATEWAY_DATA_DIR: dataDir });
  t.teardown(() => setup.close());
  t.like(await ask(setup.client, 'hello'), { content: 'ok' });
  t.deepEqual(vendor.problems, []);
  // Rotated: the next check sends the new key.
  expectedKey = 'sk-moderation-rotated-9876543210';
  await setup.gateway.gateway.vault.credentials.replaceSecret(stored.id, { api_key: expectedKey });
  t.like(await ask(setup.client, 'hello again'), { content: 'ok' });
  t.deepEqual(vendor.problems, []);
  t.is(vendor.fake.requests.length, 2);
  t.false(setup.gateway.rawLog().includes(API_KEY));
  t.false(setup.gateway.rawLog().includes(expectedKey));
  // An unknown id fails (closed): the vendor is never called without its secret.
  const missing = await policyGateway({ input: [openaiModeration({ baseUrl: `${vendor.origin}/v1`, credential: 'cred_missing' })] }, answering('ok'));
  t.teardown(() => missing.close());
  await assertDenied(t, ask(missing.client, 'hello'));
  const [entry] = await missing.gateway.waitForEntries(1);
  t.like(entry.guardrails[0], { guardrail: 'openai-moderation', action: 'deny', failure: 'error', onError: 'fail-closed' });
  t.is(vendor.fake.requests.length, 2);
});
