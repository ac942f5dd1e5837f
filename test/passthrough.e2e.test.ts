import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import test from 'ava';
import { type Fake, startFake } from './fakes/openai-fake.js';
import { gatewayHeaders, loggedOnce, PROVIDER_KEY, SECRETS, startGateway, type TestGateway, traceId } from './harness.js';

let fake: Fake;
let gateway: TestGateway;
const binary = randomBytes(64 * 1024);

test.before(async () => {
  fake = await startFake((request, response) => {
    if (request.url.startsWith('/v1/files/binary')) {
      response.writeHead(206, { 'content-type': 'application/octet-stream', 'x-upstream-marker': 'bin', etag: '"abc"' });
      response.end(binary);
      return;
    }
    const echo = JSON.stringify({ method: request.method, url: request.url, length: request.body.length });
    response.writeHead(request.method === 'DELETE' ? 202 : 201, {
      'content-type': 'application/json; charset=utf-8',
      'x-upstream-marker': 'echo',
      'set-cookie': ['a=1', 'b=2'],
      'access-control-allow-origin': '*',
      'access-control-allow-credentials': 'true',
      'x-request-id': 'req_123',
      'content-length': String(Buffer.byteLength(echo)),
    });
    response.end(echo);
  });
  gateway = await startGateway({ bodyLimitBytes: 256 * 1024 });
});

test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

for (const method of ['GET', 'POST', 'PUT', 'DELETE'] as const) {
  test(`${method} passes through with path, query, body and forwarded headers intact`, async (t) => {
    const trace = traceId(`pass-${method}`);
    const body = method === 'POST' || method === 'PUT' ? JSON.stringify({ purpose: 'fine-tune', trace }) : undefined;
    const response = await fetch(`${gateway.url}/v1/files/file-abc/content?limit=2&order=desc&trace=${trace}`, {
      method,
      headers: gatewayHeaders(fake.baseUrl, {
        'x-gateway-trace-id': trace,
        'openai-beta': 'assistants=v2',
        'x-custom-thing': 'kept',
        'x-not-forwarded': 'dropped',
        'x-gateway-forward-headers': 'openai-beta, X-Custom-Thing',
        ...(body ? { 'content-type': 'application/json' } : {}),
      }),
      body,
    });
    const received = fake.requests.find((request) => request.url.includes(`trace=${trace}`));
    t.truthy(received);
    t.is(received?.method, method);
    t.is(received?.url, `/v1/files/file-abc/content?limit=2&order=desc&trace=${trace}`);
    t.is(received?.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    t.is(received?.headers['openai-beta'], 'assistants=v2');
    t.is(received?.headers['x-custom-thing'], 'kept');
    t.is(received?.headers['x-not-forwarded'], undefined);
    t.is(received?.headers['x-gateway-api-key'], undefined);
    t.is(received?.body.toString(), body ?? '');

    const expectedBody = JSON.stringify({ method, url: received?.url, length: body?.length ?? 0 });
    t.is(response.status, method === 'DELETE' ? 202 : 201);
    t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
    t.is(response.headers.get('x-upstream-marker'), 'echo');
    t.is(response.headers.get('x-request-id'), 'req_123');
    t.deepEqual(response.headers.getSetCookie(), [], "the upstream's cookies never reach the gateway's origin");
    t.is(response.headers.get('access-control-allow-origin'), null);
    t.is(response.headers.get('access-control-allow-credentials'), null);
    t.is(response.headers.get('content-length'), String(Buffer.byteLength(expectedBody)));
    t.is(await response.text(), expectedBody);
    t.is(response.headers.get('x-gateway-trace-id'), trace);

    const entry = await loggedOnce(gateway, trace);
    t.like(entry, { operation: 'passthrough', method, path: '/v1/files/file-abc/content', status: method === 'DELETE' ? 202 : 201, provider: 'openai' });
  });
}

test('binary responses come back byte for byte, with status and headers as sent', async (t) => {
  const response = await fetch(`${gateway.url}/v1/files/binary`, { headers: gatewayHeaders(fake.baseUrl) });
  t.is(response.status, 206);
  t.is(response.headers.get('etag'), '"abc"');
  t.is(response.headers.get('content-type'), 'application/octet-stream');
  t.true(Buffer.from(await response.arrayBuffer()).equals(binary));
});

test('a binary request body reaches the provider byte for byte, streamed', async (t) => {
  const upload = randomBytes(100 * 1024);
  const trace = traceId('upload');
  const response = await fetch(`${gateway.url}/v1/uploads/part?trace=${trace}`, {
    method: 'POST',
    headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/octet-stream' }),
    body: upload,
  });
  t.is(response.status, 201);
  const received = fake.requests.find((request) => request.url.includes(trace));
  t.true(received?.body.equals(upload));
});

test('other methods get 405 with Allow, and are logged', async (t) => {
  const trace = traceId('patch');
  const response = await fetch(`${gateway.url}/v1/files/x`, {
    method: 'PATCH',
    headers: gatewayHeaders(fake.baseUrl, { 'x-gateway-trace-id': trace }),
    body: '{}',
  });
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'GET, POST, PUT, DELETE');
  t.like(await response.json(), { error: { type: 'invalid_request_error', code: 'method_not_allowed' } });
  const entry = await loggedOnce(gateway, trace);
  t.is(entry.status, 405);
});

test('a pass-through body over the limit is refused with 413', async (t) => {
  const declared = await fetch(`${gateway.url}/v1/uploads/big`, {
    method: 'POST',
    headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/octet-stream' }),
    body: randomBytes(300 * 1024),
  });
  t.is(declared.status, 413);
  t.like(await declared.json(), { error: { type: 'request_too_large' } });

  // Chunked (no Content-Length): refused once the limit is crossed.
  const status = await new Promise<number>((resolve, reject) => {
    const request = httpRequest(`${gateway.url}/v1/uploads/chunked`, {
      method: 'POST',
      headers: gatewayHeaders(fake.baseUrl, { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' }),
    });
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    let sent = 0;
    const pump = () => {
      while (sent < 400 * 1024) {
        sent += 16 * 1024;
        if (!request.write(randomBytes(16 * 1024))) return request.once('drain', pump);
      }
      request.end();
    };
    pump();
  });
  t.is(status, 413);
});

test('unknown routes outside /v1 get a JSON 404', async (t) => {
  const response = await fetch(`${gateway.url}/nothing-here`);
  t.is(response.status, 404);
  t.like(await response.json(), { error: { type: 'not_found_error' } });
});

test.after('no log line of this file contains a secret', (t) => {
  for (const secret of SECRETS) t.false(gateway.rawLog().includes(secret));
});

test('passthrough.relayUnsafeHeaders keeps the upstream Set-Cookie and Access-Control-* headers', async (t) => {
  const relaying = await startGateway({ passthrough: { relayUnsafeHeaders: true } });
  try {
    const response = await fetch(`${relaying.url}/v1/files/file-abc/content`, { headers: gatewayHeaders(fake.baseUrl) });
    t.is(response.status, 201);
    t.deepEqual(response.headers.getSetCookie(), ['a=1', 'b=2']);
    t.is(response.headers.get('access-control-allow-origin'), '*');
    t.is(response.headers.get('access-control-allow-credentials'), 'true');
    await response.text();
  } finally {
    await relaying.close();
  }
});

