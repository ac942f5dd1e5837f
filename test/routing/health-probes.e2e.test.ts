import test from 'ava';
import { type Fake, openAIHandler, startFake } from '../fakes/openai-fake.js';
import { eventually, startGateway, type TestGateway } from '../harness.js';
import { admin } from '../vault/vault-harness.js';

// What a health check sends: a chat probe is a 1-token chat completion with the check's model and
// the target's stored credential (from the vault), a models probe the provider's models list; a
// probe is not a request of the gateway's own (no log entry).

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFake(openAIHandler);
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

test.serial('a chat probe is a 1-token chat with the stored credential; its result is in the route state; no log entry is written', async (t) => {
  const credential = await admin(gateway, 'POST', '/admin/credentials', { name: 'probed', provider: 'openai', api_key: 'sk-probe-secret-0123456789' });
  t.is(credential.status, 201, credential.text);
  const created = await admin(gateway, 'POST', '/admin/routes', {
    name: 'chat-probed',
    route: {
      targets: [
        {
          name: 'only',
          provider: 'openai',
          credential: credential.json.id,
          custom_host: fake.baseUrl,
          override_params: { model: 'gpt-4o-mini' },
          health_check: { interval_ms: 1000, request: 'chat', healthy_threshold: 1 },
        },
      ],
    },
  });
  t.is(created.status, 201, created.text);
  // The health checks read the stored routes again every 5 s.
  t.true(await eventually(() => fake.requests.some((request) => request.method === 'POST')), 'a probe came');
  const probe = fake.requests.find((request) => request.method === 'POST')!;
  t.is(probe.url, '/v1/chat/completions');
  t.is(probe.headers.authorization, 'Bearer sk-probe-secret-0123456789', "the target's stored credential");
  const body = JSON.parse(probe.body.toString('utf8'));
  t.like(body, { model: 'gpt-4o-mini', max_tokens: 1 });
  t.is(body.messages.length, 1);

  t.true(await eventually(async () => (await admin(gateway, 'GET', `/admin/routes/${created.json.id}/state`)).json.targets[0].health_check?.status === 'healthy'));
  const shown = (await admin(gateway, 'GET', `/admin/routes/${created.json.id}/state`)).json.targets[0];
  t.like(shown, { state: 'closed', health_check: { status: 'healthy', interval_ms: 1000, last_status: 200, last_error: null, consecutive_failures: 0 } });
  t.is(typeof shown.health_check.last_latency_ms, 'number');
  t.true(Date.parse(shown.health_check.last_probe_at) > 0);

  await gateway.gateway.flushLogs();
  t.is(await gateway.gateway.logStore.count(), 0, 'probes are not logged as requests');
});

test.serial('a target without a health check shows null', async (t) => {
  const created = await admin(gateway, 'POST', '/admin/routes', { name: 'unprobed', route: { targets: [{ provider: 'openai', custom_host: fake.baseUrl }] } });
  t.is(created.status, 201, created.text);
  t.is((await admin(gateway, 'GET', `/admin/routes/${created.json.id}/state`)).json.targets[0].health_check, null);
});
