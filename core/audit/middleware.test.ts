import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import Koa from 'koa';
import { errors } from '../errors.js';
import { Router } from '../http/router.js';
import { auditChanges } from './event.js';
import { auditedRoute, type AuditNote, outcomeOf } from './middleware.js';
import { SqliteAuditStore } from './sqlite-store.js';
import { AuditTrail } from './trail.js';

test('outcomeOf: success below 400, denied for 401 and 403, failure otherwise', (t) => {
  t.deepEqual([200, 201, 204, 302, 400, 401, 403, 404, 409, 500].map(outcomeOf), ['success', 'success', 'success', 'success', 'failure', 'denied', 'denied', 'failure', 'failure', 'failure']);
});

test('auditedRoute writes one event per request, before the answer, with the outcome, the note, the actor and where it came from', async (t) => {
  const trail = new AuditTrail(new SqliteAuditStore(join(mkdtempSync(join(tmpdir(), 'gateway-audit-mw-')), 'audit.db')));
  const app = new Koa();
  app.silent = true;
  app.use(async (koa, next) => {
    try {
      await next();
    } catch (error) {
      koa.status = (error as { status?: number }).status ?? 500;
      koa.body = { error: (error as Error).message };
    }
  });
  const router = new Router();
  const audited = (action: string) => auditedRoute({ action, actor: (koa) => ({ type: 'user', id: String(koa.get('x-user')) }), record: (input) => trail.record(input) });
  router.patch('/teams/:id', audited('teams.update'), (koa) => {
    (koa.state.audit as AuditNote) = { target: { type: 'team', id: koa.params.id }, changes: auditChanges({ name: 'a', secret: 'x' }, { name: 'b', secret: 'y' }) };
    koa.body = { id: koa.params.id };
  });
  router.delete('/teams/:id', audited('teams.delete'), () => {
    throw errors.permission('Your role may not delete teams.', { code: 'admin_forbidden' });
  });
  router.post('/teams', audited('teams.create'), () => {
    throw new Error('boom');
  });
  app.use(router.routes());
  const server = createServer(app.callback()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const changed = await fetch(`${base}/teams/t_1`, { method: 'PATCH', headers: { 'x-user': 'u_1', 'user-agent': 'admin-cli/2' } });
    t.is(changed.status, 200);
    // The event is there as soon as the answer is.
    const [event] = (await trail.list({ limit: 1 })).data;
    t.like(event, { seq: 1, action: 'teams.update', outcome: 'success', actor: { type: 'user', id: 'u_1' }, target: { type: 'team', id: 't_1' }, address: '127.0.0.1', user_agent: 'admin-cli/2' });
    t.deepEqual(event.changes, { name: { before: 'a', after: 'b' } });
    t.is((await fetch(`${base}/teams/t_1`, { method: 'DELETE', headers: { 'x-user': 'u_2' } })).status, 403);
    t.is((await fetch(`${base}/teams`, { method: 'POST', headers: { 'x-user': 'u_3' } })).status, 500);
    t.is((await fetch(`${base}/nowhere`, { method: 'POST' })).status, 404, 'a route without the middleware writes nothing');
    const events = (await trail.list({})).data.reverse();
    t.deepEqual(events.map((item) => [item.action, item.outcome, item.actor.id]), [['teams.update', 'success', 'u_1'], ['teams.delete', 'denied', 'u_2'], ['teams.create', 'failure', 'u_3']]);
    t.like(await trail.verify(), { ok: true, count: 3 });
  } finally {
    server.close();
    await trail.close();
  }
});
