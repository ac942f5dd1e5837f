import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { assertRefused, bootError, judge } from '../../../test/guardrails/helpers.js';
import { startVendorFake, TRIGGER, type VendorBehaviour, vendorContract } from '../../../test/guardrails/vendor-contract.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { checkSigV4 } from '../../providers/bedrock/bedrock-fake.js';
import { bedrockGuardrails, interventionReasons } from './index.js';

const AWS = { accessKeyId: 'AKIAGUARDRAILTEST01', secretAccessKey: 'guardrail/Secret+Key/0000000000000000000', region: 'eu-west-1' };
const fixture = (name: string) => JSON.parse(readFileSync(join(process.cwd(), 'plugins/guardrails/bedrock-guardrails/__fixtures__', name), 'utf8'));

/** ApplyGuardrail as AWS checks it: the SigV4 signature (recomputed from the bytes received), the path, the body. */
const behaviourFor = (credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } = AWS, region = AWS.region, path = '/guardrail/gr-abc123/version/1/apply'): VendorBehaviour => ({
  check(request) {
    const problems = checkSigV4(request, credentials, region);
    if (request.method !== 'POST' || request.url !== path) problems.push(`${request.method} ${request.url}`);
    if (request.headers['content-type'] !== 'application/json') problems.push('content-type');
    const body = request.json();
    if (body.source !== 'INPUT' && body.source !== 'OUTPUT') problems.push('source');
    if (!Array.isArray(body.content) || body.content.length === 0 || !body.content.every((block: any) => typeof block?.text?.text === 'string')) problems.push('content');
    return problems;
  },
  texts: (request) => request.json().content.map((block: any) => block.text.text),
  answer: (_request, unsafe) => ({ body: fixture(unsafe.some(Boolean) ? 'apply-intervened.json' : 'apply-none.json') }),
  error: { status: 429, body: fixture('throttled.json') },
});
const behaviour = behaviourFor();

const make = (origin: string) => bedrockGuardrails({ baseUrl: origin, guardrailIdentifier: 'gr-abc123', guardrailVersion: '1', ...AWS });

vendorContract(test, { id: 'bedrock-guardrails', secret: AWS.secretAccessKey, behaviour, make });

test('params: identifier and version; access key and secret together with a region, or a credential', (t) => {
  const base = { guardrailIdentifier: 'gr-abc123', guardrailVersion: 'DRAFT' };
  assertRefused(t, bedrockGuardrails({ ...base, guardrailVersion: 'latest', ...AWS }), '/guardrailVersion');
  assertRefused(t, bedrockGuardrails(base), 'accessKeyId and secretAccessKey, or credential');
  assertRefused(t, bedrockGuardrails({ ...base, accessKeyId: AWS.accessKeyId, region: AWS.region }), 'go together');
  assertRefused(t, bedrockGuardrails({ ...base, accessKeyId: AWS.accessKeyId, secretAccessKey: AWS.secretAccessKey }), 'region is required');
  assertRefused(t, bedrockGuardrails({ ...base, ...AWS, credential: 'cred_x' }), 'not both');
  t.is(bootError(bedrockGuardrails({ ...base, credential: 'cred_x' })), undefined);
  t.is(bootError(bedrockGuardrails({ ...base, ...AWS })), undefined);
});

test.serial('the signed request: source INPUT or OUTPUT, one content block per distinct text; NONE allows, GUARDRAIL_INTERVENED denies with what it assessed', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  t.deepEqual(await judge(make(vendor.origin), ['hello', 'hello', 'world']), { action: 'allow' });
  t.deepEqual(vendor.fake.requests[0].json(), { source: 'INPUT', content: [{ text: { text: 'hello' } }, { text: { text: 'world' } }] });
  const verdict = await judge(make(vendor.origin), [`say ${TRIGGER}`], { side: 'output' });
  t.deepEqual(verdict, { action: 'deny', reason: 'bedrock-guardrails: intervened (topic Investment advice, content VIOLENCE, words)' });
  t.is(vendor.fake.requests[1].json().source, 'OUTPUT');
  t.deepEqual(vendor.problems, []);
});

test.serial('a guardrail ARN goes encoded in the path and the signature still verifies; a session token is signed', async (t) => {
  const arn = 'arn:aws:bedrock:eu-west-1:123456789012:guardrail/abc123';
  const credentials = { ...AWS, sessionToken: 'session/Token+0000' };
  const vendor = await startVendorFake(behaviourFor(credentials, AWS.region, `/guardrail/${encodeURIComponent(arn)}/version/DRAFT/apply`));
  t.teardown(() => vendor.close());
  t.deepEqual(await judge(bedrockGuardrails({ baseUrl: vendor.origin, guardrailIdentifier: arn, guardrailVersion: 'DRAFT', ...credentials }), ['hi']), { action: 'allow' });
  t.is(vendor.fake.requests.length, 1);
  t.deepEqual(vendor.problems, []);
});

test.serial('a wrong secret is refused by the fake (403-like), which fails the check', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  const error = await t.throwsAsync(judge(bedrockGuardrails({ baseUrl: vendor.origin, guardrailIdentifier: 'gr-abc123', guardrailVersion: '1', ...AWS, secretAccessKey: 'wrong' }), ['hi']));
  t.is(error?.message, 'bedrock-guardrails: answered HTTP 401');
  t.true(vendor.problems.includes('signature does not match the request received'));
});

test.serial('the keys from a stored credential, under the Bedrock provider field names, region included', async (t) => {
  const vendor = await startVendorFake(behaviour);
  t.teardown(() => vendor.close());
  const opened: string[] = [];
  const plugin = bedrockGuardrails({ baseUrl: vendor.origin, guardrailIdentifier: 'gr-abc123', guardrailVersion: '1', credential: 'cred_aws' }).create(
    pluginDependencies({
      credential: async (id) => {
        opened.push(id);
        return { apiKey: AWS.accessKeyId, fields: { 'x-gateway-cloud-c-secret-access-key': AWS.secretAccessKey, 'x-gateway-cloud-c-region': AWS.region } };
      },
    }),
  );
  const verdict = await plugin.check({ side: 'input', operation: 'chat', texts: [TRIGGER], metadata: {}, parameters: {}, partial: false });
  t.like(verdict, { action: 'deny' });
  t.deepEqual(opened, ['cred_aws']);
  t.deepEqual(vendor.problems, []);
  // A credential without the secret field fails, without calling AWS.
  const incomplete = bedrockGuardrails({ baseUrl: vendor.origin, guardrailIdentifier: 'gr-abc123', guardrailVersion: '1', region: AWS.region, credential: 'cred_aws' }).create(
    pluginDependencies({ credential: async () => ({ apiKey: AWS.accessKeyId }) }),
  );
  await t.throwsAsync(async () => incomplete.check({ side: 'input', operation: 'chat', texts: ['x'], metadata: {}, parameters: {}, partial: false }), { message: /secretAccessKey field/ });
  t.is(vendor.fake.requests.length, 1);
});

test('interventionReasons never quotes a match', (t) => {
  const reasons = interventionReasons(fixture('apply-intervened.json').assessments);
  t.false(reasons.join(' ').includes(TRIGGER));
  t.deepEqual(interventionReasons([{ sensitiveInformationPolicy: { piiEntities: [{ match: 'a@b.c', type: 'EMAIL', action: 'ANONYMIZED' }], regexes: [{ name: 'ticket', match: 'T-1', action: 'BLOCKED' }] } }]), ['pii EMAIL', 'regex ticket']);
  t.deepEqual(interventionReasons([{ contentPolicy: { filters: [{ type: 'HATE', action: 'NONE', detected: false }] } }]), []);
});
