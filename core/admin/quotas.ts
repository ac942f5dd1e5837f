import type { Router } from '../http/router.js';
import type { QuotaGate } from '../quota/gate.js';
import type { VaultService } from '../vault/service.js';
import { accessOf, type AdminGuard } from './guard.js';

/**
 * `GET /admin/quotas`: every provider quota (stored credentials with a `quota`, and any other this
 * instance used, such as a route target's), with what each team holds in the shared window (all
 * instances) and this instance's queue: requests waiting, waits and refusals since it started.
 */
export function mountQuotaAdmin(router: Router, dependencies: { readonly guard: AdminGuard; readonly service: VaultService; readonly gate: QuotaGate }): void {
  const { guard, service, gate } = dependencies;
  router.get('/admin/quotas', guard.require('credentials.read'), async (koa) => {
    const access = accessOf(koa);
    const scheduler = gate.scheduler;
    const local = new Map(scheduler.stats().map((stats) => [stats.key, stats]));
    const credentials = (await service.credentials.list()).filter((credential) => credential.quota !== undefined && access.mayRead('credentials.read', credential));
    const keys = [
      ...credentials.map((credential) => ({ key: `cred:${credential.id}`, credential_id: credential.id, name: credential.name, quota: credential.quota })),
      ...[...local.keys()].filter((key) => !key.startsWith('cred:')).map((key) => ({ key, name: key.slice('route:'.length) })),
    ];
    const now = scheduler.clock.now();
    koa.body = {
      object: 'list',
      window_ms: scheduler.windowMs,
      data: await Promise.all(
        keys.map(async (entry) => {
          const stats = local.get(entry.key);
          const snapshot = await service.parts.state.quota.snapshot(entry.key, now, scheduler.windowMs);
          return {
            ...entry,
            teams: snapshot.teams,
            queue_depth: stats?.depth ?? 0,
            granted: stats?.granted ?? 0,
            waits: stats?.waits ?? 0,
            wait_seconds_total: Math.round((stats?.waitSeconds ?? 0) * 1000) / 1000,
            refused: stats?.refused ?? 0,
          };
        }),
      ),
    };
  });
}
