import test from 'ava';
import type { GatewayContext } from '../../core/pipeline/context.js';
import type { Hook } from '../../core/pipeline/hook.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { gatewayClient, startGateway, type TestGateway } from '../harness.js';

// Issue 21: the transform stage used to give every routed request its own `routing.prepare`
// closure. That closure, kept on the request's context, had each routed request's objects promoted
// to V8's old generation (~10 KB per request against ~1 KB on the plain path, measured with
// `BENCH_PROMOTED=1 dist/bench/pipeline-profile.js route`). The mapping is now one function for
// every request, given the context: this checks that two routed requests see the same one.
let fake: Fake;
let gateway: TestGateway;
const seen: unknown[] = [];

const probe: Hook = {
  name: 'test-prepare-probe',
  stage: 'forward',
  before: ['gateway-forward'],
  run: async (context: GatewayContext, next) => {
    seen.push(context.routing?.prepare);
    await next();
  },
};

test.before(async () => {
  fake = await startFake();
  gateway = await startGateway({ hooks: [probe] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

test('routed requests share one attempt-mapping function (no closure per request) and still map each attempt', async (t) => {
  const route = JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ name: 'only', provider: 'openai', custom_host: fake.baseUrl, override_params: { model: 'model-routed' } }] });
  const client = gatewayClient(gateway.url, { 'x-gateway-config': route });
  for (let index = 0; index < 2; index++) {
    const { response } = await client.chat.completions.create({ model: 'ignored', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    t.is(response.status, 200);
    t.is(response.headers.get('x-gateway-route-target'), 'only');
  }
  t.is(seen.length, 2);
  t.is(typeof seen[0], 'function');
  t.is(seen[0], seen[1]);
  // The shared function still maps each attempt with the target's override_params.
  t.deepEqual(
    fake.requests.map((request) => request.json().model),
    ['model-routed', 'model-routed'],
  );
});
