import { once } from 'node:events';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import Koa from 'koa';
import { errors } from '../errors.js';
import { Pipeline } from '../pipeline/runner.js';
import { type GatewayRoute, gatewayHandler, operationListener } from './handler.js';
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

test('the server dispatches an operation request without Koa, and everything else to Koa', async (t) => {
  const served: string[] = [];
  const routes = new Map<string, GatewayRoute>([
    [
      'POST /v1/chat/completions',
      async (_req, res, path, query) => {
        served.push(`route ${path} ${query}`);
        res.end();
      },
    ],
    [
      'POST /v1/broken',
      async () => {
        throw new Error('a bug');
      },
    ],
  ]);
  const unexpected: unknown[] = [];
  const listener = operationListener(
    routes,
    (req, res) => {
      served.push(`koa ${req.method} ${req.url}`);
      res.end();
    },
    (error) => unexpected.push(error),
  );
  const server = createServer(listener).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  // node:http sends the path as given (fetch would normalise the dot segments away).
  const send = async (method: string, path: string) => {
    const sent = request({ host: '127.0.0.1', port, method, path }).end();
    const [response] = (await once(sent, 'response')) as [IncomingMessage];
    let body = '';
    for await (const chunk of response) body += chunk;
    return { status: response.statusCode, body };
  };
  try {
    await send('POST', '/v1/chat/completions');
    await send('POST', '/v1/chat/completions?a=1&b');
    await send('POST', '/v1/chat/%63ompletions');
    await send('GET', '/v1/chat/completions');
    await send('POST', '/v1/x/%2e%2e/chat/completions');
    await send('POST', '/v1/models');
    await send('POST', '/health');
    t.deepEqual(served, [
      'route /v1/chat/completions ',
      'route /v1/chat/completions a=1&b',
      'route /v1/chat/completions ',
      'koa GET /v1/chat/completions',
      'koa POST /v1/x/%2e%2e/chat/completions',
      'koa POST /v1/models',
      'koa POST /health',
    ]);
    const broken = await send('POST', '/v1/broken');
    t.is(broken.status, 500);
    t.like(JSON.parse(broken.body), { error: { code: 'internal_error' } });
    t.is(unexpected.length, 1);
  } finally {
    server.close();
  }
});
