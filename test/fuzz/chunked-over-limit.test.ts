import { request } from 'node:http';
import test from 'ava';
import { ACCOUNT_KEY, PROVIDER_KEY, startGateway, type TestGateway } from '../harness.js';

// Found by the fuzz suite: a body over the limit sent with chunked transfer encoding (no
// Content-Length to refuse up front) reset the connection instead of being answered 413, because
// the request stream was destroyed (and its socket with it) when the limit was passed.

let gateway: TestGateway;

test.before(async () => {
  gateway = await startGateway({ bodyLimitBytes: 4096 });
});
test.after.always(async () => {
  await gateway?.close();
});

/** Sends `body` chunked, in 1 KB pieces, and resolves with the answer (rejects on a reset). */
function sendChunked(path: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; json: any }> {
  const url = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: url.hostname, port: url.port, method: 'POST', path, headers: { ...headers, 'transfer-encoding': 'chunked' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    for (let at = 0; at < body.length; at += 1024) outgoing.write(body.subarray(at, at + 1024));
    outgoing.end();
  });
}

const chat = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(60_000) }] }));

test('a chunked operation body over the limit is answered 413, not reset', async (t) => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const answer = await sendChunked(
      '/v1/chat/completions',
      { 'x-gateway-api-key': ACCOUNT_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': 'http://127.0.0.1:9/v1', authorization: `Bearer ${PROVIDER_KEY}`, 'content-type': 'application/json' },
      chat,
    );
    t.is(answer.status, 413);
    t.is(answer.json.error.code, 'body_too_large');
  }
});

test('a chunked admin body over the limit is answered 413, not reset', async (t) => {
  const answer = await sendChunked('/admin/credentials', { 'x-gateway-api-key': ACCOUNT_KEY, 'content-type': 'application/json' }, Buffer.alloc(1024 * 1024 + 8192, 0x20));
  t.is(answer.status, 413);
  t.is(answer.json.error.code, 'body_too_large');
});
