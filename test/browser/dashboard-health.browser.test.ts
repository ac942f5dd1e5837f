import anyTest, { type TestFn } from 'ava';
import { type Fake, openAIHandler, startFake } from '../fakes/openai-fake.js';
import { eventually, startGateway, type TestGateway } from '../harness.js';
import { admin } from '../vault/vault-harness.js';
import { browserSkipReason, openBrowser, screenshot, signIn, type BrowserSession } from './browser.js';

// A stored route whose first target has an active health check, against a loopback fake that is
// down: the probes open its breaker (no user request is made), and the route's page on the
// dashboard shows the breaker open and the probe's status, last answer and failures in a row.

interface Context {
  gateway: TestGateway;
  down: Fake;
  up: Fake;
  browser: BrowserSession & { consoleErrors: string[] };
  routeId: string;
}

const test = anyTest as TestFn<Context>;
const skipReason = browserSkipReason();
const it = skipReason ? test.skip : test.serial;

test.before(async (t) => {
  if (skipReason) return;
  const browser = await openBrowser();
  t.context.browser = browser;
  const down = await startFake((_request, response) => {
    response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'down', type: 'server_error' } }));
  });
  const up = await startFake(openAIHandler);
  // The route is stored after the start: the health checks find it when they read the routes again (every 5 s).
  const gateway = await startGateway({ routing: { breaker: { cooldownMs: 600_000 } } });
  const created = await admin(gateway, 'POST', '/admin/routes', {
    name: 'probed',
    route: {
      strategy: { mode: 'fallback' },
      targets: [
        { name: 'primary', provider: 'openai', custom_host: down.baseUrl, health_check: { interval_ms: 1000, request: 'models', unhealthy_threshold: 2 } },
        { name: 'backup', provider: 'openai', custom_host: up.baseUrl },
      ],
    },
  });
  if (created.status !== 201) throw new Error(`storing the route gave ${created.status}: ${created.text}`);
  const routeId = created.json.id as string;
  const opened = await eventually(async () => (await admin(gateway, 'GET', `/admin/routes/${routeId}/state`)).json.targets[0].state === 'open');
  if (!opened) throw new Error('the probes did not open the breaker');
  t.context = { gateway, down, up, browser, routeId };
});

test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.gateway?.close();
  await t.context.down?.close();
  await t.context.up?.close();
});

it("the route's page shows the breaker opened by probes and the probe status of each target", async (t) => {
  const { page } = t.context.browser;
  await signIn(page, t.context.gateway.url);
  await page.goto(`${t.context.gateway.url}/dashboard#/routes/${t.context.routeId}`);
  const primary = page.locator('#route-breakers table.breakers tbody tr[data-path="targets[0]"]');
  await primary.waitFor();
  t.is(await primary.getAttribute('data-state'), 'open');
  const health = primary.locator('td.health');
  t.is(await health.getAttribute('data-health'), 'unhealthy');
  t.is(await health.locator('.probe').innerText(), 'unhealthy');
  const text = await health.innerText();
  t.regex(text, /503/, 'the last answer');
  t.regex(text, /failed in a row/);
  t.is(await page.locator('#route-breakers thead th').last().textContent(), 'Health check');
  const backup = page.locator('#route-breakers table.breakers tbody tr[data-path="targets[1]"] td.health');
  t.is(await backup.innerText(), '—', 'a target without a health check');
  await screenshot(page, 'dashboard-route-health');
  t.deepEqual(t.context.browser.consoleErrors, []);
});
