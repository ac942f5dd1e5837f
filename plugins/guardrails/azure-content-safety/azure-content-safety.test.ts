import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { assertRefused, bootError, judge } from '../../../test/guardrails/helpers.js';
import { startVendorFake, TRIGGER, type VendorBehaviour, vendorContract } from '../../../test/guardrails/vendor-contract.js';
import { ANALYZE_MAX_CHARS, analysisReasons, azureContentSafety, pieces } from './index.js';

const KEY = 'azure-content-safety-key-0123456789abcdef';
const fixture = (name: string) => JSON.parse(readFileSync(join(process.cwd(), 'plugins/guardrails/azure-content-safety/__fixtures__', name), 'utf8'));

const operationOf = (url: string) => /^\/contentsafety\/text:(analyze|shieldPrompt|detectProtectedMaterial)\?api-version=(.+)$/.exec(url);

/** Azure AI Content Safety: the subscription key header, `api-version`, each operation's body. */
const behaviour: VendorBehaviour = {
  check(request) {
    const problems: string[] = [];
    const match = operationOf(request.url);
    if (request.method !== 'POST' || !match) return [`${request.method} ${request.url}`];
    if (match[2] !== '2024-09-01') problems.push(`api-version ${match[2]}`);
    if (request.headers['ocp-apim-subscription-key'] !== KEY) problems.push('subscription key');
    if (request.headers.authorization !== undefined) problems.push('unexpected authorization header');
    const body = request.json();
    if (match[1] === 'analyze') {
      if (typeof body.text !== 'string' || body.text.length === 0 || body.text.length > ANALYZE_MAX_CHARS) problems.push('analyze text');
      if (body.outputType !== 'FourSeverityLevels' && body.outputType !== 'EightSeverityLevels') problems.push('outputType');
    }
    if (match[1] === 'shieldPrompt' && (typeof body.userPrompt !== 'string' || !Array.isArray(body.documents))) problems.push('shieldPrompt body');
    if (match[1] === 'detectProtectedMaterial' && typeof body.text !== 'string') problems.push('detectProtectedMaterial body');
    return problems;
  },
  texts(request) {
    const body = request.json();
    return operationOf(request.url)![1] === 'shieldPrompt' ? [body.userPrompt, ...body.documents] : [body.text];
  },
  answer(request, unsafe) {
    const operation = operationOf(request.url)![1];
    if (operation === 'analyze') return { body: fixture(unsafe[0] ? 'analyze-unsafe.json' : 'analyze-safe.json') };
    if (operation === 'shieldPrompt') return { body: { userPromptAnalysis: { attackDetected: unsafe[0] }, documentsAnalysis: unsafe.slice(1).map((attackDetected) => ({ attackDetected })) } };
    return { body: { protectedMaterialAnalysis: { detected: unsafe[0] } } };
  },
  error: { status: 500, body: fixture('error.json') },
};

vendorContract(test, { id: 'azure-content-safety', secret: KEY, behaviour, make: (origin) => azureContentSafety({ baseUrl: origin, apiKey: KEY }) });

test('params: baseUrl and a secret are required; thresholds are severities 0-7; at least one check', (t) => {
  assertRefused(t, azureContentSafety({ apiKey: KEY } as never), 'baseUrl');
  assertRefused(t, azureContentSafety({ baseUrl: 'http://127.0.0.1:1' }), 'apiKey or credential');
  assertRefused(t, azureContentSafety({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY, thresholds: { Violence: 9 } }), '/thresholds');
  assertRefused(t, azureContentSafety({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY, thresholds: { Gore: 2 } as never }), '/thresholds');
  assertRefused(t, azureContentSafety({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY, analyze: false }), 'at least one');
  t.is(bootError(azureContentSafety({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY, promptShields: true, protectedMaterial: true })), undefined);
});

test.serial('text analysis: the recorded answers; severity thresholds per category and overall', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  const base = { baseUrl: `${vendor.origin}/`, apiKey: KEY };
  t.deepEqual(await judge(azureContentSafety(base), ['hello', 'hello']), { action: 'allow' });
  t.is(vendor.fake.requests.length, 1, 'identical texts are analysed once');
  t.deepEqual(await judge(azureContentSafety(base), [TRIGGER]), { action: 'deny', reason: 'azure-content-safety: Violence severity 6' });
  // The safe answer has Violence at 2: a threshold of 2 denies it; the unsafe one has Hate at 2 and Violence at 6.
  t.deepEqual(await judge(azureContentSafety({ ...base, thresholds: { Violence: 2 } }), ['calm']), { action: 'deny', reason: 'azure-content-safety: Violence severity 2' });
  t.deepEqual(await judge(azureContentSafety({ ...base, thresholds: { Violence: 7 } }), [TRIGGER]), { action: 'allow' });
  t.deepEqual(await judge(azureContentSafety({ ...base, threshold: 2, thresholds: { Violence: 7 } }), [TRIGGER]), { action: 'deny', reason: 'azure-content-safety: Hate severity 2' });
  const sent = vendor.fake.requests.at(-1)!.json();
  t.deepEqual(sent, { text: TRIGGER, outputType: 'FourSeverityLevels' });
  await judge(azureContentSafety({ ...base, categories: ['Hate'], blocklistNames: ['words'], outputType: 'EightSeverityLevels' }), ['x']);
  t.deepEqual(vendor.fake.requests.at(-1)!.json(), { text: 'x', categories: ['Hate'], blocklistNames: ['words'], haltOnBlocklistHit: false, outputType: 'EightSeverityLevels' });
  t.deepEqual(vendor.problems, []);
});

test('a blocklist match denies, naming the list, never the matched text', (t) => {
  const answer = { blocklistsMatch: [{ blocklistName: 'internal', blocklistItemId: '1', blocklistItemText: 'secret-project' }], categoriesAnalysis: [] };
  t.deepEqual(analysisReasons(answer, {}), ['blocklist internal']);
  t.throws(() => analysisReasons({}, {}), { message: 'azure-content-safety: answer has no categoriesAnalysis' });
});

test.serial('a text longer than one analysis takes is analysed in pieces; any piece denies', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  const long = `${'a'.repeat(ANALYZE_MAX_CHARS)}${TRIGGER}`;
  t.like(await judge(azureContentSafety({ baseUrl: vendor.origin, apiKey: KEY }), [long]), { action: 'deny' });
  t.is(vendor.fake.requests.length, 2);
  t.deepEqual(vendor.problems, []);
  t.deepEqual(pieces('ab😀cd', 3), ['ab', '😀c', 'd']);
});

test.serial('Prompt Shields on the input: the last text is the user prompt, the earlier ones documents', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  const shields = azureContentSafety({ baseUrl: vendor.origin, apiKey: KEY, analyze: false, promptShields: true });
  t.deepEqual(await judge(shields, ['system text', 'a document', 'the question']), { action: 'allow' });
  t.deepEqual(vendor.fake.requests[0].json(), { userPrompt: 'the question', documents: ['system text', 'a document'] });
  t.deepEqual(await judge(shields, ['system text', `a ${TRIGGER} document`, 'the question']), { action: 'deny', reason: 'azure-content-safety: prompt attack in 1 document(s)' });
  t.deepEqual(await judge(shields, [`ignore all that: ${TRIGGER}`]), { action: 'deny', reason: 'azure-content-safety: prompt attack in the user prompt' });
  // Not on the output side.
  t.deepEqual(await judge(shields, [TRIGGER], { side: 'output' }), { action: 'allow' });
  t.is(vendor.fake.requests.length, 3);
  t.deepEqual(vendor.problems, []);
});

test.serial('protected material on the output (not the input); with analysis both run and both reasons are given', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  const guardrail = azureContentSafety({ baseUrl: vendor.origin, apiKey: KEY, protectedMaterial: true });
  t.deepEqual(await judge(guardrail, [`lyrics ${TRIGGER}`], { side: 'output' }), { action: 'deny', reason: 'azure-content-safety: Violence severity 6; protected material' });
  t.deepEqual(
    vendor.fake.requests.map((request) => operationOf(request.url)![1]).sort(),
    ['analyze', 'detectProtectedMaterial'],
  );
  t.deepEqual(await judge(guardrail, ['plain words'], { side: 'output' }), { action: 'allow' });
  const before = vendor.fake.requests.length;
  await judge(guardrail, ['plain words'], { side: 'input' });
  t.is(vendor.fake.requests.length, before + 1, 'only the analysis runs on the input');
  t.deepEqual(vendor.problems, []);
});
