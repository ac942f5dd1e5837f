import test from 'ava';
import type { AuthSlice, GatewayContext, RequestSlice } from '../pipeline/context.js';
import { attemptView, requestContextOf, servedRequest, servingAuth } from './attempt.js';

const context = (): GatewayContext =>
  ({ traceId: 't-1', request: { streaming: false, body: { model: 'a' } }, auth: { policy: 'first' }, transform: { upstreamRequest: {} } }) as unknown as GatewayContext;

test('an attempt view answers its own auth and request and reads everything else through, live', (t) => {
  const request = context();
  const auth = { policy: 'second' } as unknown as AuthSlice;
  const sent: RequestSlice = { streaming: false, body: { model: 'b' } };
  const view = attemptView(request, auth, sent);
  t.is(view.auth, auth);
  t.is(view.request, sent);
  t.is(view.traceId, 't-1');
  request.transform!.model = 'b-2024';
  t.is(view.transform?.model, 'b-2024');
});

test('an attempt view takes no writes: they throw rather than land on the view and be lost', (t) => {
  const view = attemptView(context(), {} as AuthSlice, { streaming: false });
  t.throws(() => Object.assign(view, { log: { costUsd: 1 } }), { instanceOf: TypeError, message: /read only property 'log'/ });
  t.throws(() => Object.defineProperty(view, 'cache', { value: {} }), { instanceOf: TypeError });
});

test('requestContextOf gives the request\'s own context for a view of it, and a context itself otherwise', (t) => {
  const request = context();
  const first = attemptView(request, {} as AuthSlice, { streaming: false });
  const second = attemptView(request, {} as AuthSlice, { streaming: true });
  t.is(requestContextOf(first), request);
  t.is(requestContextOf(second), request);
  t.is(requestContextOf(request), request);
});

test('servingAuth and servedRequest read the attempt that answers, else the auth stage\'s and the request', (t) => {
  const request = context();
  t.is(servingAuth(request), request.auth);
  t.is(servedRequest(request), request.request);
  const auth = { policy: 'second' } as unknown as AuthSlice;
  const sent: RequestSlice = { streaming: false, body: { model: 'b' } };
  request.routed = { attempts: [], tried: { target: {} as never, auth, request: sent, view: attemptView(request, auth, sent) } };
  t.is(servingAuth(request), auth);
  t.is(servedRequest(request), sent);
});
