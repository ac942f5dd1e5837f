import { AdminAccess } from '../admin/assemble.js';
import { jsonBody } from '../admin/json-body.js';
import { mountMcpServerAdmin } from '../admin/mcp-servers.js';
import { type Container, GatewaySettings, provide } from '../container.js';
import { PolicyRegistry } from '../guardrails/registry.js';
import { clientAddress } from '../http/client-address.js';
import { CustomHostGuard } from '../http/custom-host.js';
import type { Router } from '../http/router.js';
import { RequestLogging } from '../logs/assemble.js';
import { VaultService } from '../vault/service.js';
import { Organization } from '../org/organization.js';
import { McpGateway } from './gateway.js';

/** Registers the MCP gateway (docs/mcp.md): its stored servers and sessions live in the vault's shared state. */
export { McpGateway } from './gateway.js';

export function registerMcp(container: Container): void {
  provide(container, McpGateway, (c) => {
    const { config, logger } = c.resolve(GatewaySettings);
    const vault = c.resolve(VaultService);
    const guard = c.resolve(CustomHostGuard);
    const bodies = config.logs.bodies;
    return new McpGateway({
      vault: () => vault.parts,
      isAccountKey: (value) => c.resolve(AdminAccess).accountKey.matches(value),
      checkUrl: async (url) => void (await guard.check(url)),
      connectLookup: guard.lookup,
      failedAuth: (request, refusal) => c.resolve(AdminAccess).failedAuth.failure(clientAddress(request, config.server.trustProxy), refusal),
      stdio: config.mcp.servers,
      refreshMs: config.mcp.refreshMs,
      bodyLimitBytes: config.bodyLimitBytes,
      sinks: c.resolve(RequestLogging).sinks,
      bodiesOn: (record) => (typeof bodies === 'function' ? bodies({ caller: record.caller ? { type: 'virtual-key', id: record.caller.keyId, name: record.caller.keyName } : { type: 'account' }, metadata: {} }) : bodies),
      logger,
      policy: (name) => c.resolve(PolicyRegistry).get(name),
      ...(config.defaultPolicy !== undefined ? { defaultPolicy: config.defaultPolicy } : {}),
      team: (id) => c.resolve(Organization).teams.get(id),
      teamChanged: (id) => c.resolve(Organization).teams.forget(id),
    });
  });
}

/** Mounts `/mcp`, `/mcp/<server>` and the admin API's `/admin/mcp-servers`. */
export function mountMcp(router: Router, container: Container): void {
  const mcp = container.resolve(McpGateway);
  const guard = container.resolve(CustomHostGuard);
  const policies = container.resolve(PolicyRegistry);
  mountMcpServerAdmin(router, {
    guard: container.resolve(AdminAccess).guard,
    body: jsonBody(1024 * 1024),
    mcp,
    service: container.resolve(VaultService),
    checkUrl: (url) => guard.check(url),
    policyExists: (name) => policies.has(name),
  });
  const serve = (server: string | undefined) => async (koa: import('koa').Context) => {
    // The endpoint writes the response itself (Koa's responder is bypassed).
    koa.respond = false;
    await mcp.endpoint.serve(koa.req, koa.res, server);
  };
  router.all('/mcp', serve(undefined));
  router.all('/mcp/:server', (koa) => serve(koa.params.server)(koa));
}
