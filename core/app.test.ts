import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { openai } from '../plugins/providers/openai/index.js';
import { createGateway } from './app.js';
import { ALLOW, defineGuardrail } from './guardrails/define.js';
import type { PluginDependencies } from './spec/manifest.js';

const environment = (): NodeJS.ProcessEnv => ({
  GATEWAY_API_KEY: 'gw-app-test-key-0123456789abcdef',
  GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'gateway-app-test-')),
});

/** A guardrail that keeps the dependencies each instance was created with. */
function probe(seen: PluginDependencies[]) {
  return defineGuardrail<Record<string, never>>(
    { id: 'dependency-probe', version: '1.0.0', description: 'Keeps its dependencies.', stages: ['input'], incremental: false },
    (_params, dependencies) => {
      seen.push(dependencies);
      return () => ALLOW;
    },
  );
}

test('plugins get the container’s logger (a child bound to their id), control-plane HTTP client and clock', async (t) => {
  const seen: PluginDependencies[] = [];
  const clock = { now: () => 42 };
  const lines: string[] = [];
  const gateway = createGateway(
    { providers: [openai()], policies: { checked: { input: [probe(seen)({})] } }, guardrails: [probe(seen)({})] },
    { environment: environment(), clock, logDestination: { write: (line: string) => lines.push(line) } },
  );
  t.teardown(() => gateway.close());
  t.true(seen.length >= 1);
  for (const dependencies of seen) {
    t.is(dependencies.clock, clock);
    t.is(dependencies.http, seen[0].http, 'one control-plane client for every plugin');
    t.is(typeof dependencies.http.post, 'function');
    dependencies.logger.warn({ probe: true }, 'from the plugin');
  }
  await new Promise<void>((resolve) => gateway.logger.flush(() => resolve()));
  t.true(lines.some((line) => line.includes('"plugin":"dependency-probe"') && line.includes('from the plugin')));
});

test('dashboard sessions expire by the container’s clock', async (t) => {
  let time = Date.parse('2026-01-01T00:00:00Z');
  const key = 'gw-app-test-key-0123456789abcdef';
  const gateway = createGateway({ providers: [openai()] }, { environment: environment(), clock: { now: () => time }, logDestination: { write() {} } });
  t.teardown(() => gateway.close());
  const { url } = await gateway.listen(0, '127.0.0.1');
  const signedIn = await fetch(`${url}/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: key }) });
  t.is(signedIn.status, 201);
  t.like(await signedIn.json(), { expires_at: '2026-01-01T08:00:00.000Z' });
  const cookie = signedIn.headers.get('set-cookie')!.split(';')[0];
  const session = async () => ((await (await fetch(`${url}/dashboard/session`, { headers: { cookie } })).json()) as { signed_in: boolean }).signed_in;
  t.true(await session());
  time += 8 * 60 * 60 * 1000;
  t.false(await session());
});
