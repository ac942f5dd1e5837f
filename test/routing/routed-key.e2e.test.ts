import test from 'ava';
import OpenAI from 'openai';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { startGateway, type TestGateway } from '../harness.js';
import { admin, fixedUsageHandler } from '../vault/vault-harness.js';

// The two halves of routing together, as a tool that only sets a base URL and an API key uses them:
// a stored route (admin API, vault credentials), a virtual key naming it, and the official SDK with
// that key as its apiKey. The first target answers 503; the request falls back to the second.

let down: Fake;
let up: Fake;
let gateway: TestGateway;

test.before(async () => {
  down = await startFake((_request, response) => {
    response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
  });
  up = await startFake(fixedUsageHandler(0));
  gateway = await startGateway();
});
test.after.always(async () => {
  await gateway?.close();
  await down?.close();
  await up?.close();
});

test('a virtual key naming a stored fallback route: the SDK with only baseURL + apiKey gets the second target, attempts logged', async (t) => {
  const credential = async (name: string, secret: string) => (await admin(gateway, 'POST', '/admin/credentials', { name, provider: 'openai', api_key: secret })).json.id as string;
  const primary = await credential('primary', 'sk-primary-secret-0123456789');
  const backup = await credential('backup', 'sk-backup-secret-0123456789');
  const stored = await admin(gateway, 'POST', '/admin/routes', {
    name: 'resilient',
    route: {
      strategy: { mode: 'fallback' },
      targets: [
        { name: 'primary', provider: 'openai', credential: primary, custom_host: down.baseUrl },
        { name: 'backup', provider: 'openai', credential: backup, custom_host: up.baseUrl, override_params: { model: 'gpt-4o-mini' } },
      ],
    },
  });
  t.is(stored.status, 201, JSON.stringify(stored.json));
  const created = await admin(gateway, 'POST', '/admin/virtual-keys', { name: 'routed', route: 'resilient' });
  t.is(created.status, 201, JSON.stringify(created.json));

  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: created.json.key, maxRetries: 0, timeout: 10_000 });
  const { data, response } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  t.is(data.choices[0].message.content, 'ok');
  t.is(response.headers.get('x-gateway-route-target'), 'backup');
  t.is(response.headers.get('x-gateway-attempts'), '2');

  t.is(down.requests.length, 1);
  t.is(down.requests[0].headers.authorization, 'Bearer sk-primary-secret-0123456789');
  t.is(up.requests.length, 1);
  t.is(up.requests[0].headers.authorization, 'Bearer sk-backup-secret-0123456789');
  t.is(up.requests[0].json().model, 'gpt-4o-mini', 'the target override applied');
  const [entry] = await gateway.waitForEntries(1);
  t.deepEqual(
    entry.attempts?.map((attempt) => [attempt.target, attempt.status]),
    [
      ['primary', 503],
      ['backup', 200],
    ],
  );
  t.like(entry.route, { name: 'resilient', source: 'key', version: 1 });
});
