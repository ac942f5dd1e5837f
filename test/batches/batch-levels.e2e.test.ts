import test, { type ExecutionContext } from 'ava';
import OpenAI, { toFile } from 'openai';
import { type AnthropicBatchesFake, startAnthropicBatchesFake } from './anthropic-batches-fake.js';
import { PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';
import { admin, createKey } from '../vault/vault-harness.js';
import { anthropic } from '../../plugins/providers/anthropic/index.js';

/** A batch's money at every level of its key (docs/batches.md#money): here its team's. */
let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [anthropic()], pricing: { models: { anthropic: { 'claude-levels': { input: 2, output: 10 } } } } });
});
test.after.always(() => gateway.close());

const line = (customId: string) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model: 'claude-levels', max_tokens: 50, messages: [{ role: 'user', content: 'Hello?' }] } });

async function teamKey(t: ExecutionContext, name: string, budgetUsd: number): Promise<{ fake: AnthropicBatchesFake; client: OpenAI; teamId: string; keyId: string }> {
  const fake = await startAnthropicBatchesFake(PROVIDER_KEY);
  t.teardown(() => fake.close());
  const team = await admin(gateway, 'POST', '/admin/teams', { name, limits: { budget_usd: budgetUsd } });
  t.is(team.status, 201, team.text);
  // The key itself has no budget: only its team's binds it.
  const { id, key } = await createKey(t, gateway, { name: `${name}-key`, provider: 'anthropic', provider_key: PROVIDER_KEY, custom_host: fake.baseUrl, team_id: team.json.id });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', defaultHeaders: { 'x-gateway-api-key': key }, maxRetries: 0 });
  return { fake, client, teamId: team.json.id, keyId: id };
}

const upload = async (client: OpenAI, lines: string[]) => client.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'), purpose: 'batch' });
const teamBudget = async (teamId: string) => (await admin(gateway, 'GET', `/admin/teams/${teamId}`)).json.limits_usage.budget as { spent_usd: number; reserved_usd: number };

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5000;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await read();
  }
  return value;
}

test("a team's budget refuses a batch whose estimate it cannot hold, naming the team; nothing is created", async (t) => {
  const { fake, client, teamId } = await teamKey(t, 'batch-poor-team', 0.0000001);
  const file = await upload(client, [line('a'), line('b')]);
  const error = await t.throwsAsync(client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }));
  t.like(error, { status: 403, error: { code: 'budget_exceeded', budget: { level: 'team', level_id: teamId } } });
  t.regex((error as Error).message, /Team batch-poor-team's budget is exceeded/);
  t.is(fake.requests.length, 0);
  t.false((await client.batches.list()).data.some((batch) => batch.input_file_id === file.id));
});

test("a batch reserves its estimate at its team and settles there once, at the batch price; the key's spend counts it too", async (t) => {
  const { fake, client, teamId, keyId } = await teamKey(t, 'batch-rich-team', 1);
  const file = await upload(client, [line('a'), line('b')]);
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  // The batch's estimate, alone (the creating call's own pass-through reservation of $0.01 settles as it ends).
  const reserved = await until(() => teamBudget(teamId), (budget) => budget.reserved_usd < 0.01);
  t.true(reserved.reserved_usd > 0, 'the estimate is reserved at the team');
  t.is(reserved.spent_usd, 0);

  fake.end(fake.only().id, {
    r0: { type: 'succeeded', text: 'Hi.', usage: { input_tokens: 1000, output_tokens: 100 } },
    r1: { type: 'errored', errorType: 'overloaded_error', message: 'Overloaded' },
  });
  t.is((await client.batches.retrieve(batch.id)).status, 'completed');
  // 1000 × $1 + 100 × $5 per million: Anthropic's 50% batch discount.
  const settled = await until(() => teamBudget(teamId), (budget) => budget.reserved_usd === 0);
  t.deepEqual(settled, { ...settled, spent_usd: 0.0015, reserved_usd: 0 });
  // Read again: the batch has ended, nothing is charged twice.
  await client.batches.retrieve(batch.id);
  t.is((await teamBudget(teamId)).spent_usd, 0.0015);
  t.is((await admin(gateway, 'GET', `/admin/virtual-keys/${keyId}/usage`)).json.spend_usd.total, 0.0015);
});
