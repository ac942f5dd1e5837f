import test from 'ava';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { gatewayHeaders, loggedOnce, startGateway, type TestGateway, traceId } from './harness.js';

let fake: Fake;
let gateway: TestGateway;

test.before(async () => {
  // An endless stream: one chunk every 50 ms until the connection goes away.
  fake = await startFake((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const timer = setInterval(() => {
      response.write(
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tick "},"finish_reason":null}]}\n\n',
      );
    }, 50);
    response.on('close', () => clearInterval(timer));
  });
  gateway = await startGateway();
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

test('a client that disconnects mid-stream makes the provider see its request closed', async (t) => {
  const trace = traceId('disconnect');
  const controller = new AbortController();
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    signal: controller.signal,
    headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/json', 'x-gateway-trace-id': trace }),
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'go on' }], stream: true }),
  });
  t.is(response.status, 200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let received = '';
  while (!received.includes('tick')) {
    const { value } = await reader.read();
    received += decoder.decode(value);
  }
  t.is(fake.requests.length, 1);
  const upstream = fake.requests[0];
  controller.abort();
  // The fake ticks for ever: only the gateway cancelling the request closes it (10 s is a bound for
  // a loaded machine, not a speed target; docs/performance.md has the measured figures).
  const closed = await Promise.race([upstream.closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000))]);
  t.true(closed, 'the provider connection was never closed');
  const entry = await loggedOnce(gateway, trace);
  t.like(entry, { status: 499, outcome: 'client_closed', streaming: true });
});
