import test from 'ava';
import type { GatewayContext } from '../../core/pipeline/context.js';
import type { Hook } from '../../core/pipeline/hook.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { gatewayClient, startGateway, type TestGateway } from '../harness.js';

// Issue 21: the transform stage used to give every routed request its own `routing.prepare`
// closure, which had each routed request's objects promoted to V8's old generation. Issue 32: no
// callback is parked on the context at all. The forward stage builds each attempt as a value (the
// target's auth, the request with its `override_params`, the upstream request built by the
// transform stage's pure `buildUpstreamRequest`) on its own `routed` slice; the auth stage's
// `auth` and the route's `request` are never rewritten.
let fake: Fake;
let gateway: TestGateway;
const before: Array<{ functions: string[]; model?: string }> = [];
const after: Array<{ model?: string; attemptModel?: string; attemptTarget?: string; upstreamModel?: unknown; routingFrozen: boolean }> = [];

const functionFields = (slice: object | undefined): string[] => Object.entries(slice ?? {}).flatMap(([name, value]) => (typeof value === 'function' ? [name] : []));

const bodyText = (body: unknown): string => (typeof body === 'string' ? body : body instanceof Uint8Array ? Buffer.from(body).toString() : '{}');

const probeBefore: Hook = {
  name: 'test-attempt-probe-before',
  stage: 'forward',
  before: ['gateway-forward'],
  run: async (context: GatewayContext, next) => {
    before.push({ functions: [...functionFields(context.routing), ...functionFields(context.transform)], model: context.request.model });
    await next();
  },
};

const probeAfter: Hook = {
  name: 'test-attempt-probe-after',
  stage: 'forward',
  after: ['gateway-forward'],
  run: async (context: GatewayContext, next) => {
    const attempt = context.routed?.attempt;
    after.push({
      model: context.request.model,
      attemptModel: attempt?.request.model,
      attemptTarget: attempt?.target.name,
      upstreamModel: (JSON.parse(bodyText(attempt?.upstreamRequest.body)) as { model?: unknown }).model,
      routingFrozen: Object.isFrozen(context.routing),
    });
    await next();
  },
};

test.before(async () => {
  fake = await startFake();
  gateway = await startGateway({ hooks: [probeBefore, probeAfter] });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

test('a routed attempt is a value on the forward slice: no callback on the context, the request and auth never rewritten', async (t) => {
  const route = JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ name: 'only', provider: 'openai', custom_host: fake.baseUrl, override_params: { model: 'model-routed' } }] });
  const client = gatewayClient(gateway.url, { 'x-gateway-config': route });
  for (let index = 0; index < 2; index++) {
    const { response } = await client.chat.completions.create({ model: 'ignored', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    t.is(response.status, 200);
    t.is(response.headers.get('x-gateway-route-target'), 'only');
  }
  t.deepEqual(before, [
    { functions: [], model: 'ignored' },
    { functions: [], model: 'ignored' },
  ]);
  for (const seen of after) {
    // The route's request stays the client's; the attempt carries the target's override_params.
    t.like(seen, { model: 'ignored', attemptModel: 'model-routed', attemptTarget: 'only', upstreamModel: 'model-routed', routingFrozen: true });
  }
  t.is(after.length, 2);
  // Each attempt is mapped with the target's override_params.
  t.deepEqual(
    fake.requests.map((request) => request.json().model),
    ['model-routed', 'model-routed'],
  );
});
