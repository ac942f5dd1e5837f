import { Router } from '../http/router.js';
import type { AdminGuard } from './guard.js';
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
  router.get('/openapi.json', async (koa) => {
    koa.body = (await import('./openapi.js')).adminOpenApi;
  });
  router.get('/routes/schema', (koa) => void (koa.body = routeSchema));

  router.post('/credentials', guard.middleware, body, async (koa) => {
    koa.body = await actions.createCredential(requestJson(koa));
    koa.status = 201;
  });
  router.get('/credentials', guard.middleware, async (koa) => {
    koa.body = { object: 'list', data: await actions.listCredentials() };
  });
  router.get('/credentials/:id', guard.middleware, async (koa) => {
    koa.body = await actions.getCredential(koa.params.id);
  });
  router.post('/credentials/:id/rotate', guard.middleware, body, async (koa) => {
    koa.body = await actions.rotateCredential(koa.params.id, requestJson(koa));
  });
  router.get('/alerts', guard.middleware, async (koa) => {
    koa.body = { object: 'list', data: await actions.alerts() };
  });
  router.delete('/credentials/:id', guard.middleware, async (koa) => {
    await actions.deleteCredential(koa.params.id);
    koa.status = 204;
  });

  router.post('/virtual-keys', guard.middleware, body, async (koa) => {
    koa.body = await actions.createKey(requestJson(koa));
    koa.status = 201;
  });
  router.get('/virtual-keys', guard.middleware, async (koa) => {
    koa.body = { object: 'list', data: await actions.listKeys() };
  });
  router.get('/virtual-keys/:id', guard.middleware, async (koa) => {
    koa.body = await actions.getKey(koa.params.id);
  });
  router.patch('/virtual-keys/:id', guard.middleware, body, async (koa) => {
    koa.body = await actions.updateKey(koa.params.id, requestJson(koa));
  });
  router.delete('/virtual-keys/:id', guard.middleware, async (koa) => {
    await actions.deleteKey(koa.params.id);
    koa.status = 204;
  });
  router.post('/virtual-keys/:id/rotate', guard.middleware, async (koa) => {
    koa.body = await actions.rotateKey(koa.params.id);
  });
  router.get('/virtual-keys/:id/usage', guard.middleware, async (koa) => {
    koa.body = await actions.usage(koa.params.id);
  });

  mountRouteAdmin(router, { ...dependencies, body });

  return router;
}
