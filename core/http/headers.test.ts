import test from 'ava';
import { endToEndHeaders } from './headers.js';

const upstream = {
  'content-type': 'text/plain',
  'set-cookie': ['dashboard_session=evil; Path=/'],
  'set-cookie2': 'old=1',
  'access-control-allow-origin': 'https://evil.example',
  'access-control-allow-credentials': 'true',
  'access-control-expose-headers': 'x-gateway-trace-id',
  connection: 'keep-alive, x-hop',
  'x-hop': '1',
  'x-request-id': 'req_1',
};

test('relayed upstream headers lose Set-Cookie and Access-Control-* (every answer relaying them: pass-through, multipart)', (t) => {
  t.deepEqual(endToEndHeaders(upstream), { 'content-type': 'text/plain', 'x-request-id': 'req_1' });
});

test('relayUnsafe keeps them (passthrough.relayUnsafeHeaders); hop-by-hop headers go either way', (t) => {
  const kept = endToEndHeaders(upstream, { relayUnsafe: true });
  t.deepEqual(kept['set-cookie'], ['dashboard_session=evil; Path=/']);
  t.is(kept['access-control-allow-origin'], 'https://evil.example');
  t.false('connection' in kept);
  t.false('x-hop' in kept);
});
