import { once } from 'node:events';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import Koa from 'koa';
import { errors } from '../errors.js';
import { Pipeline } from '../pipeline/runner.js';
import { gatewayHandler } from './handler.js';
import type { OperationHandler } from './operation.js';

const operation: OperationHandler = {
  name: 'chat',
  mapsErrors: true,
  parse: async () => ({ streaming: false }),
  toUpstream: () => {
    throw new Error('not used');
  },
  respond: () => {
    throw new Error('not used');
  },
};

test('a client that leaves while a stage still works: the log stage runs after that stage is done', async (t) => {
  const order: string[] = [];
  let logged!: () => void;
  const loggedOnce = new Promise<void>((resolve) => {
    logged = resolve;
  });
  const pipeline = new Pipeline(
    [
      {
        name: 'slow-admission',
        stage: 'auth',
        async run(context) {
          // Still working (say, reserving a budget in Redis) when the client goes away.
          await once(context.signal, 'abort');
          await new Promise((resolve) => setTimeout(resolve, 50));
          order.push('reserved');
          throw errors.clientClosed('the client went away');
        },
      },
      {
        name: 'settle',
        stage: 'log',
        async run(_context, next) {
          order.push('settled');
          logged();
          await next();
        },
      },
    ],
    { development: true },
  );
  const app = new Koa();
  app.use(gatewayHandler(pipeline, operation, { bodyLimitBytes: 1024 }));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const client = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions' });
    client.on('error', () => {});
    client.end('{}');
    await new Promise((resolve) => setTimeout(resolve, 50));
    client.destroy();
    await loggedOnce;
    t.deepEqual(order, ['reserved', 'settled']);
  } finally {
    server.close();
  }
});
