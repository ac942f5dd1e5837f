import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { type ChatResponse, errors, type ProviderRegistration } from '../../core/spec/index.js';
import { gatewayHeaders, startGateway, type TestGateway } from '../harness.js';

// The provider contract's one way to refuse (docs/writing-a-provider.md#refusing-a-request): a
// GatewayError thrown by validate, toUpstream or auth reaches the client as it is, before anything is
// sent upstream; anything else thrown is a 500 that reveals nothing; a mapper that cannot read an
// answer is a 502.

const ANSWER: ChatResponse = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop', logprobs: null }],
};

const refuser: ProviderRegistration = {
  manifest: { id: 'refuser', kind: 'provider', specificationVersion: 'v1', version: '1.0.0', description: 'Refuses requests in every documented way (test).' },
  params: {},
  create: () => ({
    id: 'refuser',
    name: 'Refuser',
    operations: {
      chat: {
        validate(request) {
          if (request.model === 'refused-by-validate') throw errors.invalidRequest('This model is refused.', { param: 'model', code: 'model_refused' });
        },
        toUpstream(request, target) {
          if (request.model === 'refused-by-mapping') throw errors.invalidRequest('Only text here.', { param: 'messages[0].content', code: 'unsupported_parameter' });
          if (request.model === 'mapping-bug') throw new TypeError('internal detail 7f3a');
          return { method: 'POST', url: `${target.baseUrl}/chat/completions`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) };
        },
        fromUpstream(body) {
          if (!Array.isArray((body as ChatResponse).choices)) throw new TypeError('no choices');
          return body as ChatResponse;
        },
      },
    },
    baseUrl: () => 'http://127.0.0.1:9/v1',
    auth(_request, target) {
      if (target.headers['x-test-no-key']) throw errors.authentication('Refuser needs a key.', { code: 'missing_provider_credentials' });
      return {};
    },
    authHeaders: ['authorization'],
    mapError: () => ({ message: 'upstream error', type: 'api_error', param: null, code: null }),
  }),
};

let upstream: Server;
let upstreamUrl: string;
let received = 0;
let gateway: TestGateway;

test.before(async () => {
  upstream = createServer((request, response) => {
    received++;
    request.resume();
    const answer = request.headers['x-test-shape'] === 'broken' ? { unexpected: true } : ANSWER;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  gateway = await startGateway({ providers: [refuser] });
});

test.after.always(async () => {
  await gateway?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

async function chat(model: string, headers: Record<string, string> = {}): Promise<{ status: number; error: Record<string, unknown> | undefined; sent: number }> {
  const before = received;
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: gatewayHeaders(upstreamUrl, { 'x-gateway-provider': 'refuser', 'content-type': 'application/json', 'x-gateway-forward-headers': 'x-test-shape', ...headers }),
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await response.json()) as { error?: Record<string, unknown> };
  return { status: response.status, error: body.error, sent: received - before };
}

test('a GatewayError thrown by validate reaches the client as it is, nothing sent upstream', async (t) => {
  const { status, error, sent } = await chat('refused-by-validate');
  t.is(status, 400);
  t.deepEqual(error, { message: 'This model is refused.', type: 'invalid_request_error', param: 'model', code: 'model_refused' });
  t.is(sent, 0);
});

test('a GatewayError thrown by toUpstream reaches the client as it is, nothing sent upstream', async (t) => {
  const { status, error, sent } = await chat('refused-by-mapping');
  t.is(status, 400);
  t.deepEqual(error, { message: 'Only text here.', type: 'invalid_request_error', param: 'messages[0].content', code: 'unsupported_parameter' });
  t.is(sent, 0);
});

test('a GatewayError thrown by auth reaches the client as it is, nothing sent upstream', async (t) => {
  const { status, error, sent } = await chat('m', { 'x-test-no-key': '1' });
  t.is(status, 401);
  t.like(error, { type: 'authentication_error', code: 'missing_provider_credentials', message: 'Refuser needs a key.' });
  t.is(sent, 0);
});

test('anything else thrown before sending is a 500 internal_error that reveals nothing', async (t) => {
  const { status, error, sent } = await chat('mapping-bug');
  t.is(status, 500);
  t.like(error, { type: 'api_error', code: 'internal_error' });
  t.false(JSON.stringify(error).includes('7f3a'));
  t.is(sent, 0);
});

test('fromUpstream throwing on an answer it cannot read is a 502 upstream_invalid_response; a readable one passes', async (t) => {
  const broken = await chat('m', { 'x-test-shape': 'broken' });
  t.is(broken.status, 502);
  t.like(broken.error, { code: 'upstream_invalid_response' });
  t.is(broken.sent, 1);
  const fine = await chat('m');
  t.is(fine.status, 200);
});
