import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { SECRETS, sdkClient, startGateway } from '../harness.js';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status: { code: number };
}

/** A loopback OTLP/HTTP collector that keeps what it receives. */
async function startCollector(): Promise<{ url: string; bodies: string[]; paths: string[]; server: Server }> {
  const bodies: string[] = [];
  const paths: string[] = [];
  const server = createServer(async (request, response) => {
    let text = '';
    for await (const chunk of request) text += chunk;
    paths.push(`${request.method} ${request.url} ${request.headers['content-type']} ${request.headers['x-collector-token']}`);
    bodies.push(text);
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, paths, server };
}

const attribute = (span: ExportedSpan, key: string) => {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

let fake: Fake;
test.before(async () => {
  fake = await startFake();
});
test.after.always(() => fake?.close());

test.serial('spans follow the GenAI conventions, continue the caller\'s trace and reach the provider as traceparent', async (t) => {
  const collector = await startCollector();
  const gateway = await startGateway({}, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=abc%20def' });
  const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const callerSpan = '00f067aa0ba902b7';
  try {
    const client = sdkClient(gateway.url, fake.baseUrl, { traceparent: `00-${callerTrace}-${callerSpan}-01` });
    const seen = fake.requests.length;
    await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5, max_tokens: 20 });
    const received = fake.requests[seen].headers.traceparent as string;
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(received);
    t.truthy(match, `provider got traceparent ${received}`);
    t.is(match![1], callerTrace, 'the caller\'s trace is continued');
    await gateway.close(); // flushes the exporter
    t.true(collector.paths.every((path) => path === 'POST /v1/traces application/json abc def'), collector.paths.join('; '));
    const spans: ExportedSpan[] = collector.bodies.flatMap((body) => JSON.parse(body).resourceSpans.flatMap((resource: any) => resource.scopeSpans.flatMap((scope: any) => scope.spans)));
    const server = spans.find((span) => span.kind === 2)!;
    const clientSpan = spans.find((span) => span.kind === 3)!;
    t.is(spans.length, 2);
    t.is(server.traceId, callerTrace);
    t.is(server.parentSpanId, callerSpan);
    t.is(server.name, 'POST /v1/chat/completions');
    t.is(attribute(server, 'http.response.status_code'), '200');
    t.is(clientSpan.traceId, callerTrace);
    t.is(clientSpan.parentSpanId, server.spanId);
    t.is(clientSpan.spanId, match![2], 'the provider\'s parent is the client span');
    t.is(clientSpan.name, 'chat gpt-4o');
    t.is(attribute(clientSpan, 'gen_ai.operation.name'), 'chat');
    t.is(attribute(clientSpan, 'gen_ai.provider.name'), 'openai');
    t.is(attribute(clientSpan, 'gen_ai.request.model'), 'gpt-4o');
    t.is(attribute(clientSpan, 'gen_ai.response.model'), 'gpt-4.1-2025-04-14');
    t.is(attribute(clientSpan, 'gen_ai.request.temperature'), 0.5);
    t.is(attribute(clientSpan, 'gen_ai.request.max_tokens'), '20');
    t.is(attribute(clientSpan, 'gen_ai.usage.input_tokens'), '19');
    t.is(attribute(clientSpan, 'gen_ai.usage.output_tokens'), '10');
    t.is(attribute(clientSpan, 'server.address'), '127.0.0.1');
    const [start, end] = [BigInt(clientSpan.startTimeUnixNano), BigInt(clientSpan.endTimeUnixNano)];
    t.true(end >= start && BigInt(server.startTimeUnixNano) <= start && BigInt(server.endTimeUnixNano) >= end);
    t.true(Math.abs(Number(start / 1_000_000n) - Date.now()) < 60_000, 'times are epoch nanoseconds');
    for (const secret of SECRETS) t.false(collector.bodies.join('').includes(secret));
  } finally {
    await gateway.close();
    collector.server.close();
  }
});

test.serial('without an exporter the caller\'s traceparent is passed on unchanged; without one at all none is invented', async (t) => {
  const gateway = await startGateway();
  try {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const seen = fake.requests.length;
    await sdkClient(gateway.url, fake.baseUrl, { traceparent }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    await sdkClient(gateway.url, fake.baseUrl).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    t.is(fake.requests[seen].headers.traceparent, traceparent);
    t.is(fake.requests[seen + 1].headers.traceparent, undefined);
  } finally {
    await gateway.close();
  }
});
