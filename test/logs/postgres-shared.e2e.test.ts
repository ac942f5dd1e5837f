import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, sdkClient, startGateway, traceId } from '../harness.js';
import { DATABASE_URL, dropSchemas, postgresReachable, uniqueSchema } from './fixtures.js';

const postgres = await postgresReachable();
if (!postgres.ok) console.log(`PostgreSQL shared-log test skipped: ${postgres.reason}`);
const schema = uniqueSchema('shared');

let fake: Fake;
test.before(async () => {
  fake = await startFake();
});
test.after.always(async () => {
  await fake?.close();
  if (postgres.ok) await dropSchemas([schema]);
});

(postgres.ok ? test : test.skip)('with DATABASE_URL two instances show the same logs', async (t) => {
  // Started together: the schema migration runs once, under an advisory lock.
  const [first, second] = await Promise.all([
    startGateway({ logs: { postgresSchema: schema } }, { DATABASE_URL }),
    startGateway({ logs: { postgresSchema: schema } }, { DATABASE_URL }),
  ]);
  try {
    const trace = traceId('shared');
    await sdkClient(first.url, fake.baseUrl, { 'x-gateway-trace-id': trace }).chat.completions.create({ model: 'a', messages: [{ role: 'user', content: 'one' }] });
    await sdkClient(second.url, fake.baseUrl, { 'x-gateway-trace-id': trace }).chat.completions.create({ model: 'b', messages: [{ role: 'user', content: 'two' }] });
    await Promise.all([first.gateway.flushLogs(), second.gateway.flushLogs()]);
    const lists = await Promise.all(
      [first, second].map(async (gateway) => {
        const response = await fetch(`${gateway.url}/admin/logs?trace_id=${trace}`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } });
        return ((await response.json()) as { data: Array<{ id: string }> }).data.map((row) => row.id);
      }),
    );
    t.is(lists[0].length, 2);
    t.deepEqual(lists[0], lists[1]);
  } finally {
    await Promise.all([first.close(), second.close()]);
  }
});
