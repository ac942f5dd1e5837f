import test from 'ava';
import type { Hook } from '../../core/pipeline/hook.js';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { ACCOUNT_KEY, SECRETS, sdkClient, startGateway, type TestGateway } from '../harness.js';

/** Parses the Prometheus text format strictly enough to reject malformed output; returns samples by `name{labels}`. */
function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  const typed = new Set<string>();
  const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})? (-?(?:[0-9.e+-]+|[Nn][Aa][Nn]|\+Inf|-Inf))$/;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      typed.add(type[1]);
      continue;
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue;
    const match = sample.exec(line);
    if (!match) throw new Error(`not Prometheus text: ${JSON.stringify(line)}`);
    const family = match[1].replace(/_(bucket|sum|count)$/, '');
    if (!typed.has(match[1]) && !typed.has(family)) throw new Error(`sample before its TYPE line: ${line}`);
    samples.set(`${match[1]}${match[2] ?? ''}`, Number(match[3]));
  }
  return samples;
}

const verdictHook: Hook = {
  name: 'test-verdict',
  stage: 'guardrail',
  async run(context, next) {
    context.guardrail?.verdicts.push({ guardrail: 'test-check', side: 'input', verdict: { action: 'allow' }, ms: 0.25 });
    await next();
  },
};

let fake: Fake;
let gateway: TestGateway;
test.before(async () => {
  fake = await startFake();
  gateway = await startGateway({ hooks: [verdictHook] });
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

async function scrape(url = gateway.url, key: string | null = ACCOUNT_KEY): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(`${url}/metrics`, { headers: key ? { 'x-gateway-api-key': key } : {} });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

const delta = (before: Map<string, number>, after: Map<string, number>, key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);

test.serial('/metrics parses as Prometheus text and its counters move by exactly the requests made', async (t) => {
  await gateway.gateway.flushLogs();
  const first = await scrape();
  t.is(first.status, 200);
  t.regex(first.type ?? '', /^text\/plain; version=0\.0\.4/);
  const before = parsePrometheus(first.text);

  const client = sdkClient(gateway.url, fake.baseUrl);
  for (let index = 0; index < 5; index++) await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] });
  for (let index = 0; index < 2; index++) {
    const stream = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }], stream: true });
    for await (const _chunk of stream) {
      // drain
    }
  }
  const rejected = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
  t.is(rejected.status, 401);
  await gateway.gateway.flushLogs();

  const after = parsePrometheus((await scrape()).text);
  const plain = '{provider="openai",model="gpt-4.1-2025-04-14",operation="chat",status="200"}';
  const streamed = '{provider="openai",model="gpt-4o-mini",operation="chat",status="200"}';
  t.is(delta(before, after, `gateway_requests_total${plain}`), 5);
  t.is(delta(before, after, `gateway_requests_total${streamed}`), 2);
  t.is(delta(before, after, 'gateway_requests_total{provider="",model="",operation="chat",status="401"}'), 1);
  t.is(delta(before, after, 'gateway_tokens_total{provider="openai",model="gpt-4.1-2025-04-14",type="prompt"}'), 5 * 19);
  t.is(delta(before, after, 'gateway_tokens_total{provider="openai",model="gpt-4.1-2025-04-14",type="completion"}'), 5 * 10);
  t.is(delta(before, after, 'gateway_overhead_seconds_count{provider="openai",operation="chat"}'), 7);
  t.is(delta(before, after, 'gateway_upstream_duration_seconds_count{provider="openai",operation="chat"}'), 7);
  t.is(delta(before, after, 'gateway_time_to_first_token_seconds_count{provider="openai",operation="chat"}'), 2);
  t.is(delta(before, after, 'gateway_guardrail_verdicts_total{guardrail="test-check",side="input",action="allow"}'), 7);
  t.is(delta(before, after, 'gateway_log_entries_total{result="written"}'), 8);
  t.is(after.get('gateway_log_entries_dropped_total{reason="spill_full"}'), 0);
  t.is(after.get('gateway_log_queue_depth'), 0);
  t.is(after.get('gateway_log_store_up'), 1);
  t.is(after.get(`gateway_upstream_connections{origin="${fake.origin}",state="running"}`), 0);
  t.true((after.get(`gateway_upstream_connections{origin="${fake.origin}",state="connected"}`) ?? 0) >= 1);
  const text = (await scrape()).text;
  for (const secret of SECRETS) t.false(text.includes(secret));
  // The verdict is stored with the entry as well.
  const logged = await gateway.gateway.logStore.list({ limit: 1, statusClass: 2 });
  t.deepEqual(logged.data[0].guardrails, [{ guardrail: 'test-check', side: 'input', action: 'allow', ms: 0.25 }]);
});

test.serial('/metrics needs the account key unless made public', async (t) => {
  t.is((await scrape(gateway.url, null)).status, 401);
  const open = await startGateway({ metrics: { public: true } });
  try {
    const answer = await scrape(open.url, null);
    t.is(answer.status, 200);
    t.true(parsePrometheus(answer.text).has('gateway_log_queue_depth'));
  } finally {
    await open.close();
  }
});
