import test from 'ava';
import type { LogEntry } from '../logs/entry.js';
import { GatewayMetrics, MAX_MODEL_LABELS, MAX_ORIGIN_LABELS } from './metrics.js';

const entry = (model: string): LogEntry => ({
  id: 'id',
  time: new Date().toISOString(),
  traceId: 't',
  method: 'POST',
  path: '/v1/chat/completions',
  operation: 'chat',
  provider: 'openai',
  model,
  status: 200,
  outcome: 'ok',
  callerType: 'virtual-key',
  streaming: false,
  durationMs: 1,
  gatewayMs: 1,
  metadata: {},
  guardrails: [],
});

test('model label values are capped: a caller inventing model names cannot grow the registry without bound', async (t) => {
  const metrics = new GatewayMetrics({});
  for (let index = 0; index < MAX_MODEL_LABELS + 100; index++) metrics.sink.write(entry(`model-${index}`));
  metrics.sink.write(entry('model-0'));
  const text = await metrics.render();
  const models = new Set([...text.matchAll(/^gateway_requests_total\{[^}]*model="([^"]*)"/gm)].map((match) => match[1]));
  t.is(models.size, MAX_MODEL_LABELS + 1);
  t.true(models.has('other'));
  t.regex(text, /gateway_requests_total\{[^}]*model="other"[^}]*\} 100\b/);
  t.regex(text, /gateway_requests_total\{[^}]*model="model-0"[^}]*\} 2\b/, 'a known model keeps its own label');
});

test('origin label values of the pool gauge are capped: thousands of custom-host origins give a bounded number of series', async (t) => {
  const pools = Array.from({ length: 2000 }, (_, index) => ({
    origin: `guarded:http://127.0.0.1:${10_000 + index}`,
    connected: 1,
    pending: 0,
    running: 0,
  }));
  const metrics = new GatewayMetrics({ upstreamPools: () => pools });
  const text = await metrics.render();
  const series = [...text.matchAll(/^gateway_upstream_connections\{([^}]*)\}/gm)];
  const origins = new Set(series.map((match) => /origin="([^"]*)"/.exec(match[1])?.[1]));
  t.is(origins.size, MAX_ORIGIN_LABELS + 1);
  t.true(origins.has('other'));
  t.true(series.length <= (MAX_ORIGIN_LABELS + 1) * 3, `${series.length} series`);
  t.regex(text, /gateway_upstream_connections\{origin="other",state="connected"\} 1900\b/);
});

test("a batch's entry is counted once, at its end: its intermediate states (`progress`) are not requests", async (t) => {
  const metrics = new GatewayMetrics({});
  const batch = { ...entry('batch-model'), operation: 'batch' as const, replaces: true as const };
  metrics.sink.write({ ...batch, progress: true });
  metrics.sink.write({ ...batch, progress: true });
  metrics.sink.write(batch);
  const text = await metrics.render();
  t.regex(text, /^gateway_requests_total\{[^}]*model="batch-model"[^}]*\} 1$/m);
});
