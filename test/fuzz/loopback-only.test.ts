import { lookup } from 'node:dns';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import test from 'ava';
import { installLoopbackGuard } from './loopback-only.js';

const guard = installLoopbackGuard();

const lookupOf = (name: string) =>
  new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) => lookup(name, { all: true }, (error, address) => resolve({ error, address })));

test.serial('the guard answers localhost and refuses every other name without a resolver', async (t) => {
  t.deepEqual((await lookupOf('localhost')).address, [{ address: '127.0.0.1', family: 4 }]);
  // Reserved names only (RFC 2606), so that a broken guard could not send a query out.
  for (const name of ['api.example', 'x.invalid', 'example.test']) {
    const { error } = await lookupOf(name);
    t.is(error?.code, 'ENOTFOUND', name);
  }
  t.deepEqual(guard.refusedLookups.slice(-3), ['api.example', 'x.invalid', 'example.test']);
});

test.serial('the guard fails a connect to a non-loopback host before it is opened, and lets loopback through', async (t) => {
  // Hosts that cannot leave the machine even if the guard failed: names whose lookup (ours) fails
  // and records, and the unspecified addresses, which Linux connects locally.
  const reached: string[] = [];
  const failingLookup = (hostname: string, _options: unknown, callback: (error: Error) => void) => {
    reached.push(hostname);
    callback(new Error('lookup reached'));
  };
  for (const host of ['api.openai.com', 'x.invalid', '0.0.0.0', '::']) {
    const socket = connect({ host, port: 9, lookup: failingLookup as never });
    const [error] = (await once(socket, 'error')) as [NodeJS.ErrnoException];
    t.is(error.code, 'ECONNREFUSED', host);
    t.regex(error.message, /refused by the fuzz suite/, host);
  }
  t.deepEqual(reached, [], 'refused before any lookup');
  t.deepEqual(guard.refusedConnects, ['api.openai.com', 'x.invalid', '0.0.0.0', '::']);

  const server = createServer((socket) => socket.end());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
  await once(socket, 'connect');
  socket.destroy();
  server.close();
  t.is(guard.refusedConnects.length, 4);
});
