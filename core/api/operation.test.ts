import { Readable } from 'node:stream';
import test from 'ava';
import { GatewayError } from '../errors.js';
import { readUpstreamAnswer } from './operation.js';

test('an upstream answer over the limit is a 502 and is not read further', async (t) => {
  let pulled = 0;
  async function* endless(): AsyncGenerator<Uint8Array> {
    for (;;) {
      pulled++;
      yield Buffer.alloc(1024, 1);
    }
  }
  const error = await t.throwsAsync(readUpstreamAnswer(Readable.from(endless()), 'some-provider', 10 * 1024));
  t.true(error instanceof GatewayError);
  t.is((error as GatewayError).status, 502);
  t.is((error as GatewayError).body.code, 'upstream_response_too_large');
  // The source never ends: reading stopped because of the limit (a few chunks may be buffered ahead).
  t.true(pulled < 100, `read ${pulled} chunks`);
});

test('an answer within the limit comes back whole', async (t) => {
  const bytes = await readUpstreamAnswer(Readable.from([Buffer.from('{"a":'), Buffer.from('1}')]), 'p', 100);
  t.is(bytes.toString(), '{"a":1}');
});
