import { Router } from '../http/router.js';
import { auditChanges } from '../audit/event.js';
import { accessOf, type AdminGuard, noteAudit } from './guard.js';
import { jsonBody, requestJson } from './json-body.js';
import { mountRouteAdmin, type RouteActionDependencies } from './route-actions.js';
import { routeSchema } from '../routing/route-schema.js';
import { type VirtualKeyActionDependencies, VirtualKeyActions } from './virtual-key-actions.js';

/** Largest admin request body (a credential, a key's settings). */
const BODY_LIMIT = 1024 * 1024;

/**
 * The admin API for credentials, virtual keys, stored routes and model aliases (`/admin/credentials`,
 * `/admin/virtual-keys`, `/admin/routes`, `/admin/models`),
 * guarded by the account key (a virtual key gets 403), plus its OpenAPI description at
 * `/admin/openapi.json`. Answers never carry a secret: a key's value is shown only in the answers
 * to its creation and rotation.
 */
export function virtualKeyAdminRouter(dependencies: VirtualKeyActionDependencies & Pick<RouteActionDependencies, 'routing'> & { readonly guard: AdminGuard }): Router {
  const { guard, service } = dependencies;
  const actions = new VirtualKeyActions({ ...dependencies, configRoutes: dependencies.configRoutes ?? dependencies.routing?.routes });
  // Before the vault has started (an app used without listen) no virtual key can be valid.
  guard.recognise((key) => service.isStarted && service.keys.isKey(key));
  const router = new Router({ prefix: '/admin' });
  const body = jsonBody(BODY_LIMIT);

  // The OpenAPI documents are loaded by their first request, not at start-up.
  router.get('/openapi.json', guard.open(), async (koa) => {
    koa.body = (await import('./openapi.js')).adminOpenApi;
  });
  router.get('/routes/schema', guard.open(), (koa) => void (koa.body = routeSchema));

  router.post('/credentials', guard.require('credentials.write'), body, async (koa) => {
    const created = await actions.createCredential(requestJson(koa), accessOf(koa));
    noteAudit(koa, { target: { type: 'credential', id: created.id }, changes: { name: { after: created.name }, team_id: { after: created.team_id } } });
    koa.body = created;
    koa.status = 201;
  });
  router.get('/credentials', guard.require('credentials.read'), async (koa) => {
    koa.body = { object: 'list', data: await actions.listCredentials(accessOf(koa)) };
  });
  router.get('/credentials/:id', guard.require('credentials.read'), async (koa) => {
    koa.body = await actions.getCredential(koa.params.id, accessOf(koa));
  });
  router.patch('/credentials/:id', guard.require('credentials.write'), body, async (koa) => {
    const before = await actions.getCredential(koa.params.id, accessOf(koa));
    const after = await actions.updateCredential(koa.params.id, requestJson(koa), accessOf(koa));
    noteAudit(koa, { changes: { quota: { before: before.quota, after: after.quota } } });
    koa.body = after;
  });
  router.post('/credentials/:id/rotate', guard.require('credentials.write'), body, async (koa) => {
    koa.body = await actions.rotateCredential(koa.params.id, requestJson(koa), accessOf(koa));
  });
  router.get('/alerts', guard.require('alerts.read'), async (koa) => {
    koa.body = { object: 'list', data: await actions.alerts(accessOf(koa)) };
  });
  router.delete('/credentials/:id', guard.require('credentials.write'), async (koa) => {
    await actions.deleteCredential(koa.params.id, accessOf(koa));
    koa.status = 204;
  });

  router.post('/virtual-keys', guard.require('keys.write'), body, async (koa) => {
    const created = await actions.createKey(requestJson(koa), accessOf(koa));
    noteAudit(koa, { target: { type: 'virtual-key', id: created.id }, changes: { name: { after: created.name }, team_id: { after: created.team_id } } });
    koa.body = created;
    koa.status = 201;
  });
  router.get('/virtual-keys', guard.require('keys.read'), async (koa) => {
    koa.body = { object: 'list', data: await actions.listKeys(accessOf(koa)) };
  });
  router.get('/virtual-keys/:id', guard.require('keys.read'), async (koa) => {
    koa.body = await actions.getKey(koa.params.id, accessOf(koa));
  });
  router.patch('/virtual-keys/:id', guard.require('keys.write'), body, async (koa) => {
    const before = await actions.getKey(koa.params.id, accessOf(koa));
    const after = await actions.updateKey(koa.params.id, requestJson(koa), accessOf(koa));
    noteAudit(koa, { changes: auditChanges(before, after) });
    koa.body = after;
  });
  router.delete('/virtual-keys/:id', guard.require('keys.write'), async (koa) => {
    await actions.deleteKey(koa.params.id, accessOf(koa));
    koa.status = 204;
  });
  router.post('/virtual-keys/:id/rotate', guard.require('keys.write'), async (koa) => {
    koa.body = await actions.rotateKey(koa.params.id, accessOf(koa));
  });
  router.get('/virtual-keys/:id/usage', guard.require('keys.read'), async (koa) => {
    koa.body = await actions.usage(koa.params.id, accessOf(koa));
  });

  mountRouteAdmin(router, { ...dependencies, body });

  return router;
}
