import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { ACCOUNT_KEY, startGateway } from '../harness.js';

const require = createRequire(import.meta.url);

test('the modules the gateway loads instead of undici\'s and prom-client\'s indexes are the classes those indexes export', (t) => {
  const undici = require('undici') as typeof import('undici');
  t.is(require('undici/lib/dispatcher/pool'), undici.Pool);
  t.is((require('undici/lib/core/util') as typeof undici.util).parseHeaders, undici.util.parseHeaders);
  const promClient = require('prom-client') as typeof import('prom-client');
  t.is(require('prom-client/lib/registry'), promClient.Registry);
  t.is(require('prom-client/lib/counter'), promClient.Counter);
  t.is(require('prom-client/lib/gauge'), promClient.Gauge);
  t.is(require('prom-client/lib/cluster'), promClient.AggregatorRegistry);
  t.is(require('prom-client/lib/defaultMetrics'), promClient.collectDefaultMetrics);
});

test('the shipped configuration boots and answers without undici\'s or prom-client\'s index, @opentelemetry/api, pg or Node\'s bundled undici; it answers through undici\'s Pool', (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'start-up-modules-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const app = fileURLToPath(new URL('../../core/app.js', import.meta.url));
  const shippedConfig = fileURLToPath(new URL('../../gateway.config.js', import.meta.url));
  // The script loads node:http with require and asks with http.request, not fetch: an ES import of
  // node:http, or fetch, would load Node's bundled undici itself.
  const script = `
    import { createRequire } from 'node:module';
    const require = createRequire(import.meta.url);
    const http = require('node:http');
    const { createGateway } = await import(${JSON.stringify(app)});
    const config = (await import(${JSON.stringify(shippedConfig)})).default;
    const loaded = () => Object.keys(require.cache).map((path) => path.split('/node_modules/').at(-1));
    const upstream = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
      });
    });
    await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const key = 'gw-test-key-0123456789abcdef';
    const gateway = createGateway(config, { environment: { NODE_ENV: 'production', GATEWAY_API_KEY: key, GATEWAY_DATA_DIR: ${JSON.stringify(dataDir)}, LOG_LEVEL: 'silent' } });
    const { url } = await gateway.listen(0, '127.0.0.1');
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    const headers = { 'content-type': 'application/json', 'x-gateway-api-key': key, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': 'http://127.0.0.1:' + upstream.address().port + '/v1', authorization: 'Bearer sk-upstream-0123456789' };
    const { status, text } = await new Promise((resolve, reject) => {
      const request = http.request(url + '/v1/chat/completions', { method: 'POST', headers }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode, text }));
      });
      request.on('error', reject);
      request.end(body);
    });
    const content = JSON.parse(text).choices?.[0]?.message?.content;
    const afterAnswer = loaded();
    // Node's own bundled undici (global fetch, WebSocket): loaded by an ES import of node:http.
    const nodeUndici = process.moduleLoadList.some((name) => name.includes('deps/undici/undici'));
    await gateway.close();
    upstream.close();
    process.stdout.write(JSON.stringify({ status, content, afterAnswer, nodeUndici }));
  `;
  // A file rather than \`-e\`: the vault's worker thread inherits the process's flags, and \`--input-type\` fails it.
  const scriptFile = join(dataDir, 'boot.mjs');
  writeFileSync(scriptFile, script);
  const result = spawnSync(process.execPath, [scriptFile], { encoding: 'utf8', timeout: 60_000 });
  t.is(result.status, 0, result.stderr);
  const { status, content, afterAnswer, nodeUndici } = JSON.parse(result.stdout) as { status: number; content: string; afterAnswer: string[]; nodeUndici: boolean };
  t.is(status, 200);
  t.is(content, 'hi');
  t.false(nodeUndici, 'Node\'s bundled undici was loaded (an ES import of node:http, by the gateway or @koa/router\'s ES build)');
  t.true(afterAnswer.includes('undici/lib/dispatcher/pool.js'), 'the answer came through undici\'s Pool');
  t.true(afterAnswer.includes('prom-client/lib/registry.js'));
  for (const module of ['undici/index.js', 'prom-client/index.js', 'prom-client/lib/defaultMetrics.js']) t.false(afterAnswer.includes(module), `${module} loaded`);
  t.deepEqual(
    afterAnswer.filter((path) => path.startsWith('@opentelemetry/api/') || path.startsWith('pg/')),
    [],
  );
});

test('the process metrics (gateway_process_*) are on the first scrape, even one within a second of the start', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const scrape = await fetch(`${gateway.url}/metrics`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } });
  t.is(scrape.status, 200);
  const text = await scrape.text();
  for (const name of ['gateway_process_process_cpu_user_seconds_total', 'gateway_process_process_resident_memory_bytes', 'gateway_process_nodejs_eventloop_lag_seconds', 'gateway_process_nodejs_heap_size_used_bytes', 'gateway_process_nodejs_gc_duration_seconds']) {
    t.regex(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
  }
  t.regex(text, /^gateway_process_process_cpu_user_seconds_total \d/m);
});
