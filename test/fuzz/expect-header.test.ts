import { request } from 'node:http';
import test from 'ava';
import { ACCOUNT_KEY, startGateway, type TestGateway } from '../harness.js';

// Found by the fuzz suite: an Expect header other than 100-continue was answered by Node itself
// with a bare 417 (no JSON body).

let gateway: TestGateway;

test.before(async () => {
  gateway = await startGateway();
});
test.after.always(async () => {
  await gateway?.close();
});

function send(path: string, expect: string): Promise<{ status: number; contentType: string | undefined; text: string }> {
  const url = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: url.hostname, port: url.port, method: 'POST', path, headers: { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json', expect, 'content-length': '2' } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'], text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end('{}');
  });
}

for (const [path, expect] of [
  ['/v1/chat/completions', 'foo'],
  ['/v1/files', '200-ok'],
  ['/admin/credentials', ''],
] as const) {
  test(`Expect: ${JSON.stringify(expect)} on ${path} is answered 417 with an OpenAI-shaped error`, async (t) => {
    const answer = await send(path, expect);
    t.is(answer.status, 417);
    t.is(answer.contentType, 'application/json');
    t.deepEqual(JSON.parse(answer.text), {
      error: { message: 'The Expect header can only be "100-continue".', type: 'invalid_request_error', param: 'expect', code: 'expectation_failed' },
    });
  });
}
