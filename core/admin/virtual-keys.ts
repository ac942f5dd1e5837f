import Router from '@koa/router';
import type { Context } from 'koa';
import { invalid } from '../api/validate.js';
import { errors, GatewayError } from '../errors.js';
import { parseJsonObject, readBody } from '../http/body.js';
import type { CustomHostGuard } from '../http/custom-host.js';
import { fromNanos, periodsOf } from '../vault/limits.js';
import { publicCredential, publicVirtualKey, type VirtualKeyRecord } from '../vault/records.js';
import type { VaultService } from '../vault/service.js';
import { DuplicateNameError, type VirtualKeyInput, type VirtualKeyPatch } from '../vault/virtual-keys.js';
import type { AdminGuard } from './guard.js';
import { adminOpenApi } from './openapi.js';
import { checkVirtualKeyShape, parseCredentialBody } from './virtual-keys-input.js';

export interface VirtualKeyAdminDependencies {
  readonly guard: AdminGuard;
  readonly service: VaultService;
  readonly customHosts: CustomHostGuard;
  /** Registered provider ids. */
  readonly providerIds: () => readonly string[];
  /** True when a guardrail policy of that name is configured. */
  readonly policyExists: (name: string) => boolean;
}

const BODY_LIMIT = 1024 * 1024;

async function jsonBody(koa: Context): Promise<Record<string, unknown>> {
  return parseJsonObject(await readBody(koa.req, BODY_LIMIT));
}

const notFound = (what: string, id: string) => errors.notFound(`No ${what} with id "${id}".`, { code: `${what.replace(' ', '_')}_not_found` });

/**
 * The admin API for credentials and virtual keys (`/admin/credentials`, `/admin/virtual-keys`),
 * guarded by the account key (a virtual key gets 403), plus its OpenAPI description at
 * `/admin/openapi.json`. Answers never carry a secret: a key's value is shown only in the answers
 * to its creation and rotation.
 */
export function virtualKeyAdminRouter(dependencies: VirtualKeyAdminDependencies): Router {
  const { guard, service, customHosts } = dependencies;
  guard.recognise((key) => service.keys.isKey(key));
  const router = new Router({ prefix: '/admin' });

  router.get('/openapi.json', (koa) => {
    koa.body = adminOpenApi;
  });

  router.post('/credentials', guard.middleware, async (koa) => {
    const input = parseCredentialBody(await jsonBody(koa));
    if (input.provider !== undefined) checkProvider(input.provider);
    koa.status = 201;
    koa.body = publicCredential(await service.credentials.create(input));
  });
  router.get('/credentials', guard.middleware, async (koa) => {
    koa.body = { object: 'list', data: (await service.credentials.list()).map(publicCredential) };
  });
  router.delete('/credentials/:id', guard.middleware, async (koa) => {
    const id = koa.params.id;
    if (!(await service.credentials.get(id))) throw notFound('credential', id);
    const users = (await service.keys.list()).filter((record) => record.credential_id === id);
    if (users.length > 0) {
      throw new GatewayError(409, {
        message: `The credential is used by ${users.length} virtual key(s): ${users.map((record) => record.name).join(', ')}. Delete or re-point them first.`,
        type: 'invalid_request_error',
        param: null,
        code: 'credential_in_use',
      });
    }
    await service.credentials.delete(id);
    koa.status = 204;
  });

  router.post('/virtual-keys', guard.middleware, async (koa) => {
    const body = await jsonBody(koa);
    checkVirtualKeyShape(body, true);
    await checkReferences(body);
    const id = `vk_${crypto.randomUUID().replaceAll('-', '')}`;
    const credentialId = await credentialFor(body, id);
    try {
      const input = { ...withoutSecret(body), credential_id: credentialId } as unknown as VirtualKeyInput;
      const { record, key } = await service.keys.create(input, id);
      koa.status = 201;
      koa.body = { ...publicVirtualKey(record), key };
    } catch (error) {
      if (body.provider_key !== undefined) await service.credentials.delete(credentialId);
      throw conflictOf(error);
    }
  });
  router.get('/virtual-keys', guard.middleware, async (koa) => {
    koa.body = { object: 'list', data: (await service.keys.list()).map(publicVirtualKey) };
  });
  router.get('/virtual-keys/:id', guard.middleware, async (koa) => {
    koa.body = publicVirtualKey(await existing(koa.params.id));
  });
  router.patch('/virtual-keys/:id', guard.middleware, async (koa) => {
    const current = await existing(koa.params.id);
    const body = await jsonBody(koa);
    checkVirtualKeyShape(body, false);
    await checkReferences(body);
    const patch: Record<string, unknown> = withoutSecret(body);
    if (body.provider_key !== undefined || body.credential_id !== undefined) patch.credential_id = await credentialFor(body, current.id);
    let record: VirtualKeyRecord | undefined;
    try {
      record = await service.keys.update(current.id, patch as VirtualKeyPatch);
    } catch (error) {
      throw conflictOf(error);
    }
    if (!record) throw notFound('virtual key', current.id);
    if (record.credential_id !== current.credential_id) await deleteIfOwned(current.credential_id, current.id);
    koa.body = publicVirtualKey(record);
  });
  router.delete('/virtual-keys/:id', guard.middleware, async (koa) => {
    const deleted = await service.keys.delete(koa.params.id);
    if (!deleted) throw notFound('virtual key', koa.params.id);
    await deleteIfOwned(deleted.credential_id, deleted.id);
    koa.status = 204;
  });
  router.post('/virtual-keys/:id/rotate', guard.middleware, async (koa) => {
    const rotated = await service.keys.rotate(koa.params.id);
    if (!rotated) throw notFound('virtual key', koa.params.id);
    koa.body = { ...publicVirtualKey(rotated.record), key: rotated.key };
  });
  router.get('/virtual-keys/:id/usage', guard.middleware, async (koa) => {
    koa.body = await usageOf(await existing(koa.params.id));
  });

  function checkProvider(provider: string): void {
    if (!dependencies.providerIds().includes(provider)) {
      throw invalid('provider', `unknown provider "${provider}"; registered: ${dependencies.providerIds().join(', ')}.`);
    }
  }

  async function checkReferences(body: Record<string, unknown>): Promise<void> {
    if (typeof body.provider === 'string') checkProvider(body.provider);
    if (typeof body.guardrail_policy === 'string' && !dependencies.policyExists(body.guardrail_policy)) {
      throw invalid('guardrail_policy', `no guardrail policy named "${body.guardrail_policy}" is configured.`);
    }
    if (typeof body.credential_id === 'string' && !(await service.credentials.get(body.credential_id))) {
      throw invalid('credential_id', `no credential with id "${body.credential_id}".`);
    }
    if (typeof body.custom_host === 'string') {
      try {
        body.custom_host = await customHosts.check(body.custom_host);
      } catch (error) {
        throw invalid('custom_host', error instanceof GatewayError ? error.message : 'refused.');
      }
    }
  }

  /** The credential the key uses: the one named, or a new one sealed from `provider_key` and owned by the key. */
  async function credentialFor(body: Record<string, unknown>, keyId: string): Promise<string> {
    if (typeof body.credential_id === 'string') return body.credential_id;
    const created = await service.credentials.create({
      name: `${String(body.name ?? keyId)} (provider key)`,
      ...(typeof body.provider === 'string' ? { provider: body.provider } : {}),
      secret: { api_key: body.provider_key as string },
      ownerKeyId: keyId,
    });
    return created.id;
  }

  async function deleteIfOwned(credentialId: string, keyId: string): Promise<void> {
    const credential = await service.credentials.get(credentialId);
    if (credential?.owner_key_id === keyId) await service.credentials.delete(credentialId);
  }

  async function existing(id: string): Promise<VirtualKeyRecord> {
    const record = await service.keys.get(id);
    if (!record) throw notFound('virtual key', id);
    return record;
  }

  async function usageOf(record: VirtualKeyRecord) {
    const periods = periodsOf(record.id, Date.now());
    const budgetPeriod = record.limits?.budget_period ?? 'total';
    const [total, day, month, reserved, requestsTotal, requestsDay] = await service.parts.state.read([
      periods.spent.total,
      periods.spent.day,
      periods.spent.month,
      periods.reserved[budgetPeriod],
      periods.requestsTotal,
      periods.requestsDay,
    ]);
    const spentInPeriod = { total, day, month }[budgetPeriod];
    const budget = record.limits?.budget_usd;
    return {
      id: record.id,
      name: record.name,
      spend_usd: { total: fromNanos(total), day: fromNanos(day), month: fromNanos(month) },
      reserved_usd: fromNanos(reserved),
      requests: { total: requestsTotal, day: requestsDay },
      budget_usd: budget ?? null,
      budget_period: budget === undefined ? null : budgetPeriod,
      remaining_usd: budget === undefined ? null : Math.max(0, budget - fromNanos(spentInPeriod + reserved)),
      requests_per_minute: record.limits?.requests_per_minute ?? null,
      requests_per_day: record.limits?.requests_per_day ?? null,
      remaining_requests_today: record.limits?.requests_per_day === undefined ? null : Math.max(0, record.limits.requests_per_day - requestsDay),
    };
  }

  return router;
}

function withoutSecret(body: Record<string, unknown>): Record<string, unknown> {
  const { provider_key: _secret, ...rest } = body;
  return rest;
}

function conflictOf(error: unknown): unknown {
  if (error instanceof DuplicateNameError) {
    return new GatewayError(409, { message: error.message, type: 'invalid_request_error', param: 'name', code: 'duplicate_name' });
  }
  return error;
}
