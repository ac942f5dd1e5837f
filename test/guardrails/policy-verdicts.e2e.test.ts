import test from 'ava';
import OpenAI from 'openai';
import { pii } from '../../plugins/guardrails/index.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { DATABASE_URL, dropSchemas, makeRecord, postgresReachable, uniqueSchema } from '../logs/fixtures.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { answering } from './helpers.js';

// Real guarded requests through the official SDK with three keys (one per policy, one with none),
// then GET /admin/policies (chains, params, keys using each) and GET /admin/policies/verdicts (the
// verdicts of the last 24 hours by policy, guardrail, side and action), on SQLite and PostgreSQL.

const postgres = await postgresReachable();
if (!postgres.ok) console.log(`PostgreSQL policy verdict tests skipped: ${postgres.reason}`);
const schemas: string[] = [];
test.after.always(() => dropSchemas(schemas));

const card = 'My card is 4111 1111 1111 1111, please remember it.';
type Verdict = { guardrail: string; side: string; action: string; count: number };
const sorted = (verdicts: Verdict[]) => [...verdicts].sort((a, b) => `${a.side}${a.action}`.localeCompare(`${b.side}${b.action}`));

for (const store of ['sqlite', 'postgres'] as const) {
  const run = store === 'sqlite' || postgres.ok ? test.serial : test.skip;

  run(`${store}: the policies list their chains and keys; the verdicts of real requests are counted by policy over the last 24 hours`, async (t) => {
    const fake: Fake = await startFake(answering('Reach me at jane.doe@example.com any time.'));
    const schema = uniqueSchema('verdicts');
    if (store === 'postgres') schemas.push(schema);
    const gateway: TestGateway = await startGateway(
      {
        policies: {
          'pii-redact': { description: 'Redacts PII', input: [pii({ action: 'redact' })], output: [pii({ action: 'redact' })] },
          'pii-block': { input: [pii({ action: 'deny' })], output: [pii({ action: 'deny' })] },
        },
        defaultPolicy: 'pii-redact',
        ...(store === 'postgres' ? { logs: { postgresSchema: schema } } : {}),
      },
      store === 'postgres' ? { DATABASE_URL } : {},
    );
    t.teardown(async () => {
      await gateway.close();
      await fake.close();
    });
    const key = (name: string, policy?: string) =>
      createKey(t, gateway, { name, provider: 'openai', provider_key: 'sk-verdict-secret-0123456789', custom_host: fake.baseUrl, ...(policy ? { guardrail_policy: policy } : {}) });
    const redactor = await key('redactor', 'pii-redact');
    const blocker = await key('blocker', 'pii-block');
    const unnamed = await key('no-policy');
    const client = (value: string) => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 10_000, defaultHeaders: { 'x-gateway-api-key': value } });
    const ask = (value: string, content: string) => client(value).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content }] });

    // pii-redact: the card is redacted on the way in, the e-mail on the way out, for both keys using it.
    t.is((await ask(redactor.key, card)).choices[0].message.content?.includes('jane.doe'), false);
    t.is((await ask(unnamed.key, 'hello')).choices[0].message.content?.includes('jane.doe'), false);
    // pii-block: the card is refused before it leaves; a clean question gets its answer cut.
    await t.throwsAsync(ask(blocker.key, card), { instanceOf: OpenAI.BadRequestError });
    t.is((await ask(blocker.key, 'hello')).choices[0].finish_reason, 'content_filter');
    await gateway.waitForEntries(4, 5000);
    await gateway.gateway.flushLogs();

    // A verdict logged 25 hours ago is outside the default window and inside a 48-hour one.
    const old = Date.now() - 25 * 3_600_000;
    await gateway.gateway.logStore.insert([makeRecord({ time: new Date(old).toISOString(), guardrails: [{ policy: 'pii-block', guardrail: 'pii', side: 'input', action: 'deny', ms: 1 }] })]);

    const listed = await admin(gateway, 'GET', '/admin/policies');
    t.is(listed.status, 200, listed.text);
    const byName = new Map<string, any>(listed.json.policies.map((policy: { name: string }) => [policy.name, policy]));
    t.deepEqual(byName.get('pii-redact').input.map((step: { guardrail: string; params: unknown }) => [step.guardrail, step.params]), [['pii', { action: 'redact' }]]);
    t.deepEqual(byName.get('pii-block').output.map((step: { guardrail: string; params: unknown }) => [step.guardrail, step.params]), [['pii', { action: 'deny' }]]);
    t.deepEqual(byName.get('pii-redact').keys.map((entry: { name: string }) => entry.name), ['redactor']);
    t.deepEqual(byName.get('pii-redact').default_keys.map((entry: { name: string }) => entry.name), ['no-policy']);
    t.true(byName.get('pii-redact').default);
    t.deepEqual(byName.get('pii-block').keys, [{ id: blocker.id, name: 'blocker' }]);
    t.is(byName.get('pii-block').default_keys, undefined);

    const counts = await admin(gateway, 'GET', '/admin/policies/verdicts');
    t.is(counts.status, 200, counts.text);
    t.is(counts.json.hours, 24);
    t.is(Date.parse(counts.json.to) - Date.parse(counts.json.from), 24 * 3_600_000);
    const of = (json: any, name: string) => json.data.find((entry: { policy: string }) => entry.policy === name);
    t.like(of(counts.json, 'pii-redact'), { requests: 2, denied: 0, transformed: 2 });
    t.deepEqual(sorted(of(counts.json, 'pii-redact').verdicts), [
      { guardrail: 'pii', side: 'input', action: 'allow', count: 1 },
      { guardrail: 'pii', side: 'input', action: 'transform', count: 1 },
      { guardrail: 'pii', side: 'output', action: 'transform', count: 2 },
    ]);
    t.like(of(counts.json, 'pii-block'), { requests: 2, denied: 2, transformed: 0 });
    t.deepEqual(sorted(of(counts.json, 'pii-block').verdicts), [
      { guardrail: 'pii', side: 'input', action: 'allow', count: 1 },
      { guardrail: 'pii', side: 'input', action: 'deny', count: 1 },
      { guardrail: 'pii', side: 'output', action: 'deny', count: 1 },
    ]);

    const wider = await admin(gateway, 'GET', '/admin/policies/verdicts?hours=48');
    t.like(of(wider.json, 'pii-block'), { requests: 3, denied: 3 });
    const refused = await admin(gateway, 'GET', '/admin/policies/verdicts?hours=0');
    t.is(refused.status, 400);
    t.is(refused.json.error.param, 'hours');
  });
}
