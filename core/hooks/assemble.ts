import { keyResolversOf } from '../identity/assemble.js';
import { AdminAccess } from '../admin/assemble.js';
import { Protocols } from '../api/protocols/assemble.js';
import { cachingHook } from '../cache/assemble.js';
import { type Container, GatewaySettings, provide } from '../container.js';
import { PolicyRegistry } from '../guardrails/registry.js';
import { CustomHostGuard } from '../http/custom-host.js';
import { MemoryBudget } from '../http/memory-budget.js';
import { UpstreamClient } from '../http/upstream.js';
import { RequestLogging } from '../logs/assemble.js';
import { Pipeline } from '../pipeline/runner.js';
import { PluginRegistry } from '../registry.js';
import { Routing } from '../routing/assemble.js';
import { Telemetry } from '../telemetry/assemble.js';
import { VaultService } from '../vault/service.js';
import { QuotaGate } from '../quota/gate.js';
import { registerQuota } from '../quota/assemble.js';
import { authHook } from './auth.js';
import { forwardHook } from './forward.js';
import { guardrailHook } from './guardrail.js';
import { logHook } from './log.js';
import { transformHook } from './transform.js';
import { CredentialExchanges } from './credential-exchange.js';

/** Registers the pipeline (and the providers' quotas its forward stage waits on): the built-in stage hooks with the parts each subsystem hands them, then the config's hooks. */
export function registerPipeline(container: Container): void {
  // The providers' quotas exist for the forward stage alone.
  registerQuota(container);
  provide(container, Pipeline, (c) => {
    const { config, logger } = c.resolve(GatewaySettings);
    const vault = c.resolve(VaultService);
    const access = c.resolve(AdminAccess);
    const protocols = c.resolve(Protocols);
    const routing = c.resolve(Routing);
    const logging = c.resolve(RequestLogging);
    const operations = protocols.byName;
    const quota = c.resolve(QuotaGate);
    const { clock } = c.resolve(GatewaySettings);
    const exchanges = new CredentialExchanges(c.resolve(UpstreamClient), () => clock.now());
    return new Pipeline(
      // The runner orders hooks by stage and by their own before/after, not by position here;
      // the config's hooks, unless they say otherwise, follow the built-in ones of their stage.
      [
        authHook({
          registry: c.resolve(PluginRegistry),
          accountKey: access.accountKey,
          customHosts: c.resolve(CustomHostGuard),
          keyResolvers: keyResolversOf(c),
          failedAuth: access.failedAuth,
          forwardCookies: config.forwardCookies,
          routes: routing.catalog,
          targetCredentials: routing.targetCredentials,
        }),
        vault.hooks.admit,
        ...logging.hooks,
        guardrailHook({ policies: c.resolve(PolicyRegistry), defaultPolicy: config.defaultPolicy, operations }),
        cachingHook(c, operations),
        protocols.hook,
        transformHook({ operations, exchanges }),
        forwardHook({
          operations,
          exchanges,
          upstream: c.resolve(UpstreamClient),
          memoryBudget: c.resolve(MemoryBudget),
          maxAnswerBytes: config.upstream.maxAnswerBytes,
          traceHeaders: c.resolve(Telemetry).tracer.traceHeaders,
          routing: routing.executor,
          quota,
        }),
        vault.hooks.settle,
        quota.settleHook(),
        logHook({ sinks: [...logging.sinks], bodies: config.logs.bodies }),
        ...config.hooks,
      ],
      {
        development: config.development,
        onUnexpectedError: (error, context) => logger.error({ err: error, traceId: context.traceId }, 'unexpected error'),
      },
    );
  });
}
