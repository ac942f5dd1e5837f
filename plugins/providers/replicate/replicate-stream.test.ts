import type { ServerResponse } from 'node:http';
import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import type { ProviderTarget } from '../../../core/spec/index.js';
import { ACCOUNT_KEY, gatewayClient, startGateway, type TestGateway } from '../../../test/harness.js';
import { type Fake, type RecordedRequest, startFake } from '../../../test/fakes/openai-fake.js';
import { startRenderedFake } from '../../../test/fakes/rendered-fake.js';
import { streamRequest } from './replicate-chat.js';
import { replicateFake } from './replicate-fake.js';
import { replicate } from './index.js';

// A streamed chat on Replicate: the prediction is created with `stream: true`, and the gateway opens
// the stream its answer names (`urls.stream`), as a second request, with the same credential.

const TOKEN = 'r8_test-token-0123456789';
const MODEL = 'meta/meta-llama-3-8b-instruct';
const messages = [{ role: 'user' as const, content: 'Say hello' }];

/** A Replicate whose stream is written by `stream` (the prediction's creation answered as Replicate does). */
async function replicateWith(stream: (response: ServerResponse, request: RecordedRequest) => Promise<void> | void): Promise<Fake> {
  const fake: Fake = await startFake(async (request, response) => {
    if (request.method === 'POST') {
      const id = 'ufawqhfynnddngldkgtslldrkq';
      response.writeHead(201, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id, model: MODEL, version: 'hidden', input: request.json().input, status: 'starting', output: null, error: null, urls: { get: `${fake.baseUrl}/predictions/${id}`, stream: `${fake.origin}/v1/files/fake-stream-${id}` } }),
      );
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    await stream(response, request);
  });
  return fake;
}

async function gatewayFor(t: { teardown(fn: () => Promise<void>): void }, fake: Fake): Promise<TestGateway> {
  const gateway = await startGateway({ providers: [replicate()] });
  t.teardown(async () => {
    await gateway.close();
    await fake.close();
  });
  return gateway;
}

const post = (gateway: TestGateway, fake: Fake, signal?: AbortSignal) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'replicate', 'x-gateway-custom-host': fake.baseUrl, authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ model: MODEL, messages, stream: true }),
    signal,
  });

test('a streamed chat follows urls.stream: the tokens reach the openai SDK as Replicate sends them', async (t) => {
  let firstArrived!: () => void;
  const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
  const fake = await replicateWith(async (response) => {
    response.write('event: output\nid: 1\ndata: Hel\n\n');
    // The rest is sent only once the client holds the first token: a gateway that waited for the whole stream would never answer.
    await arrived;
    response.write('event: output\nid: 2\ndata: lo\n\nevent: output\nid: 3\ndata:  there\n\n');
    response.end('event: done\nid: 4\ndata: {}\n\n');
  });
  const gateway = await gatewayFor(t, fake);
  const client = gatewayClient(gateway.url, { 'x-gateway-provider': 'replicate', 'x-gateway-custom-host': fake.baseUrl }, TOKEN);
  const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true });
  const pieces: string[] = [];
  let finish: string | null | undefined;
  for await (const chunk of stream) {
    const content = chunk.choices[0]?.delta?.content;
    if (content) pieces.push(content);
    if (pieces.length === 1) firstArrived();
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.deepEqual(pieces, ['Hel', 'lo', ' there']);
  t.is(finish, 'stop');
  const [create, follow] = fake.requests;
  t.is(create.method, 'POST');
  t.is(create.url, `/v1/models/${MODEL}/predictions`);
  t.true(create.json().stream);
  t.is(create.headers.prefer, undefined);
  t.is(follow.method, 'GET');
  t.is(follow.url, '/v1/files/fake-stream-ufawqhfynnddngldkgtslldrkq');
  t.is(follow.headers.accept, 'text/event-stream');
  t.is(follow.headers.authorization, `Bearer ${TOKEN}`);
  t.is(follow.headers['x-gateway-api-key'], undefined);
  const [entry] = await gateway.waitForEntries(1);
  t.is(entry.status, 200);
});

test("an error event ends the client's stream with the error", async (t) => {
  const fake = await replicateWith((response) => {
    response.write('event: output\nid: 1\ndata: A\n\n');
    response.end('event: error\nid: 2\ndata: {"detail": "CUDA out of memory"}\n\n');
  });
  const gateway = await gatewayFor(t, fake);
  const answer = await post(gateway, fake);
  t.is(answer.status, 200);
  const text = await answer.text();
  t.regex(text, /"content":"A"/);
  t.regex(text, /CUDA out of memory/);
  t.regex(text, /"code":"upstream_generation_failed"/);
  t.notRegex(text, /\[DONE\]/);
});

test('the client leaving closes the upstream stream', async (t) => {
  const fake = await replicateWith((response) => {
    response.write('event: output\nid: 1\ndata: first\n\n'); // and nothing more: the stream stays open
  });
  const gateway = await gatewayFor(t, fake);
  const leave = new AbortController();
  const answer = await post(gateway, fake, leave.signal);
  const reader = answer.body!.getReader();
  let received = '';
  while (!received.includes('first')) received += new TextDecoder().decode((await reader.read()).value);
  leave.abort();
  await reader.cancel().catch(() => undefined);
  // Resolves only once the gateway closed its connection to the stream.
  await fake.requests[1].closed;
  t.is(fake.requests.length, 2);
});

test("an error status of the stream request is mapped as Replicate's error", async (t) => {
  const fake: Fake = await startFake((request, response) => {
    if (request.method === 'POST') {
      response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'p1', status: 'starting', urls: { stream: `${fake.origin}/v1/files/fake-stream-p1` } }));
      return;
    }
    response.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ title: 'Not found', detail: 'The stream has expired.', status: 404 }));
  });
  const gateway = await gatewayFor(t, fake);
  const answer = await post(gateway, fake);
  t.is(answer.status, 404);
  t.like(((await answer.json()) as { error: Record<string, unknown> }).error, { message: 'The stream has expired.', provider: 'replicate' });
});

test('the conformance fake serves the prediction and its stream', async (t) => {
  const fake = await startRenderedFake(replicateFake);
  fake.answer({ kind: 'text', text: 'Streams are fun to read.', finishReason: 'stop', usage: { promptTokens: 5, completionTokens: 6 } });
  const gateway = await gatewayFor(t, fake);
  const client = gatewayClient(gateway.url, { 'x-gateway-provider': 'replicate', 'x-gateway-custom-host': fake.baseUrl }, TOKEN);
  let text = '';
  for await (const chunk of await client.chat.completions.create({ model: MODEL, messages, stream: true })) text += chunk.choices[0]?.delta?.content ?? '';
  t.is(text, 'Streams are fun to read.');
  t.is(fake.requests.length, 2);
});

test('a stream URL on a foreign host is not followed (it would get the API token)', (t) => {
  const target: ProviderTarget = { baseUrl: 'https://api.replicate.com/v1', customHost: false, headers: {}, credentials: { apiKey: TOKEN }, strict: true };
  t.is(streamRequest({ status: 'starting', urls: { stream: 'https://streaming.api.replicate.com/v1/predictions/x' } }, target).url, 'https://streaming.api.replicate.com/v1/predictions/x');
  t.throws(() => streamRequest({ status: 'starting', urls: { stream: 'https://replicate.com.evil.example/x' } }, target), { instanceOf: GatewayError });
  const foreign = t.throws(() => streamRequest({ status: 'starting', urls: { stream: 'http://169.254.169.254/latest' } }, target), { instanceOf: GatewayError }) as GatewayError;
  t.is(foreign.status, 502);
  t.like(streamRequest({ status: 'starting', urls: { stream: 'https://stream.replicate.com/v1/files/abc' } }, target), { method: 'GET', url: 'https://stream.replicate.com/v1/files/abc', headers: { accept: 'text/event-stream' } });
  const none = t.throws(() => streamRequest({ status: 'starting', urls: {} }, target), { instanceOf: GatewayError }) as GatewayError;
  t.is(none.status, 502);
  t.like((t.throws(() => streamRequest({ status: 'failed', error: 'boom' }, target), { instanceOf: GatewayError }) as GatewayError).body, { code: 'upstream_generation_failed' });
});

test('a stream asked with its usage waits for the prediction (the token stream has no counts); each output event is a token', async (t) => {
  const fake = await startRenderedFake(replicateFake);
  fake.answer({ kind: 'text', text: 'Counted.', finishReason: 'stop', usage: { promptTokens: 5, completionTokens: 3 } });
  const gateway = await gatewayFor(t, fake);
  const client = gatewayClient(gateway.url, { 'x-gateway-provider': 'replicate', 'x-gateway-custom-host': fake.baseUrl }, TOKEN);
  let usage: unknown;
  let text = '';
  for await (const chunk of await client.chat.completions.create({ model: MODEL, messages, stream: true, stream_options: { include_usage: true } })) {
    text += chunk.choices[0]?.delta?.content ?? '';
    usage = chunk.usage ?? usage;
  }
  t.is(text, 'Counted.');
  t.like(usage, { prompt_tokens: 5, completion_tokens: 3 });
  t.is(fake.requests.length, 1);
  t.is(fake.requests[0].headers.prefer, 'wait');
  // Followed, with a limit of three tokens: three output events end with length.
  let finish: string | null = null;
  for await (const chunk of await client.chat.completions.create({ model: MODEL, messages, stream: true, max_tokens: 3 })) finish = chunk.choices[0]?.finish_reason ?? finish;
  t.is(finish, 'length');
  t.is(fake.requests.length, 3);
});
