import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { assertRefused, bootError, judge } from '../../../test/guardrails/helpers.js';
import { startVendorFake, TRIGGER, type VendorBehaviour, vendorContract } from '../../../test/guardrails/vendor-contract.js';
import { matchedFilters, modelArmor } from './index.js';

const TOKEN = 'ya29.model-armor-access-token-0123456789';
const TEMPLATE = '/v1/projects/acme-prod/locations/us-central1/templates/strict';
const fixture = (name: string) => JSON.parse(readFileSync(join(process.cwd(), 'plugins/guardrails/model-armor/__fixtures__', name), 'utf8'));

/** Model Armor: Bearer access token, the template's `:sanitizeUserPrompt` / `:sanitizeModelResponse` with their bodies. */
const behaviour: VendorBehaviour = {
  check(request) {
    const problems: string[] = [];
    const body = request.json();
    if (request.url === `${TEMPLATE}:sanitizeUserPrompt`) {
      if (typeof body.userPromptData?.text !== 'string') problems.push('userPromptData');
    } else if (request.url === `${TEMPLATE}:sanitizeModelResponse`) {
      if (typeof body.modelResponseData?.text !== 'string') problems.push('modelResponseData');
    } else {
      problems.push(`${request.method} ${request.url}`);
    }
    if (request.headers.authorization !== `Bearer ${TOKEN}`) problems.push('authorization');
    return problems;
  },
  texts: (request) => {
    const body = request.json();
    return [body.userPromptData?.text ?? body.modelResponseData?.text];
  },
  answer: (_request, unsafe) => ({ body: fixture(unsafe[0] ? 'sanitize-match.json' : 'sanitize-no-match.json') }),
  error: { status: 503, body: fixture('error.json') },
};

const make = (origin: string) => modelArmor({ baseUrl: origin, apiKey: TOKEN, project: 'acme-prod', location: 'us-central1', template: 'strict' });

vendorContract(test, { id: 'model-armor', secret: TOKEN, behaviour, make });

test('params: project, location and template are required and checked', (t) => {
  assertRefused(t, modelArmor({ apiKey: TOKEN, location: 'us-central1', template: 'strict' } as never), 'project');
  assertRefused(t, modelArmor({ apiKey: TOKEN, project: 'acme-prod', location: 'us central', template: 'strict' }), '/location');
  assertRefused(t, modelArmor({ project: 'acme-prod', location: 'us-central1', template: 'strict' }), 'apiKey or credential');
  t.is(bootError(modelArmor({ credential: 'cred_google', project: 'acme-prod', location: 'us-central1', template: 'strict' })), undefined);
});

test.serial('prompts go to sanitizeUserPrompt, answers to sanitizeModelResponse; MATCH_FOUND denies naming the filters that matched', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  t.deepEqual(await judge(make(vendor.origin), ['hello', 'hello']), { action: 'allow' });
  t.is(vendor.fake.requests.length, 1);
  t.deepEqual(vendor.fake.requests[0].json(), { userPromptData: { text: 'hello' } });
  t.deepEqual(await judge(make(vendor.origin), [`how to ${TRIGGER}`], { side: 'output' }), { action: 'deny', reason: 'model-armor: rai, pi_and_jailbreak' });
  t.deepEqual(vendor.fake.requests[1].json(), { modelResponseData: { text: `how to ${TRIGGER}` } });
  t.deepEqual(vendor.problems, []);
});

test.serial('an invocation where no filter ran (FAILURE) is an error, not an allow', async (t) => {
  const failed = { sanitizationResult: { ...fixture('sanitize-no-match.json').sanitizationResult, invocationResult: 'FAILURE' } };
  const vendor = await startVendorFake({ ...behaviour, answer: () => ({ body: failed }) });
  t.teardown(() => vendor.close());
  await t.throwsAsync(judge(make(vendor.origin), ['x']), { message: 'model-armor: no filter ran (invocationResult FAILURE)' });
});

test('matchedFilters finds a match at any depth', (t) => {
  t.deepEqual(matchedFilters(fixture('sanitize-match.json').sanitizationResult), ['rai', 'pi_and_jailbreak']);
  t.deepEqual(matchedFilters({ filterResults: { sdp: { sdpFilterResult: { deidentifyResult: { matchState: 'MATCH_FOUND' } } } } }), ['sdp']);
  t.deepEqual(matchedFilters(fixture('sanitize-no-match.json').sanitizationResult), []);
});
