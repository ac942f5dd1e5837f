import type { AccountKey } from '../identity/account-key.js';
import { errors } from '../errors.js';
import type { FailedAuthLimiter } from '../identity/failed-auth.js';
import type { CustomHostGuard } from '../http/custom-host.js';
import { gatewayKeyOf, gatewayKeyTest, identify } from '../identity/caller.js';
import type { Hook } from '../pipeline/hook.js';
import type { PluginRegistry } from '../registry.js';
import type { RouteCatalog } from '../routing/resolve.js';
import type { TargetCredentials } from '../routing/sources.js';
import { firstLeaf, mayRoute, openPlainTarget, providerPrefix, routePlan, targetOpener, type TargetDependencies } from '../routing/targets.js';
import type { KeyResolver } from '../spec/key-resolver.js';

/**
 * The auth stage: identifies the caller from `x-gateway-api-key` (the account key, or a key whose
 * prefix a {@link KeyResolver} claims; without that header, such a key as the Authorization Bearer
 * token, `x-api-key` or `api-key`: `core/identity/caller.ts`), only then reads the request body
 * (`context.loadRequest`), then resolves the route or the target (`core/routing/targets.ts`):
 * provider plugin, base URL (provider default or a custom host the policy allows), credentials and
 * forwarded headers (the header policy: `core/http/forwarded-headers.ts`). It alone writes the
 * `auth` and `routing` slices, and the request when a `provider/model` prefix names the provider.
 */
export function authHook(dependencies: {
  registry: PluginRegistry;
  accountKey: AccountKey;
  customHosts: CustomHostGuard;
  keyResolvers?: KeyResolver[];
  /** Counts wrong keys per client address; absent: not limited. */
  failedAuth?: FailedAuthLimiter;
  /** Whether `cookie` may be named in `x-gateway-forward-headers` (the config's `forwardCookies`). Default false. */
  forwardCookies?: boolean;
  /** The config's named routes and model aliases, and the stored ones; absent: no request is routed. */
  routes?: RouteCatalog;
  /** Opens the stored credentials and virtual keys route targets name; absent: such targets are refused (400). */
  targetCredentials?: TargetCredentials;
}): Hook {
  const { registry, accountKey, customHosts, keyResolvers = [], failedAuth, forwardCookies = false, routes, targetCredentials } = dependencies;
  const targets: TargetDependencies = { registry, customHosts, targetCredentials, forwardCookies, isGatewayKey: gatewayKeyTest(accountKey, keyResolvers) };
  const openTarget = targetOpener(targets);
  return {
    name: 'gateway-auth',
    stage: 'auth',
    async run(context, next) {
      const found = gatewayKeyOf(context.incoming.headers, accountKey, keyResolvers);
      if (!found) {
        throw errors.authentication('Missing x-gateway-api-key header: send your account API key or a virtual key (there, or as the Authorization Bearer token).', {
          code: 'missing_api_key',
        });
      }
      const { key, headers } = found;
      const resolution = await identify(key, context, { accountKey, keyResolvers, failedAuth });
      // The caller is known: only now is the body read, parsed or spooled (400/413 from here on).
      await context.loadRequest?.();
      if (routes !== undefined && mayRoute(context, resolution.route, routes)) {
        const routed = await routePlan(context, resolution, routes, openTarget);
        if (routed !== undefined) {
          // The auth of the route's first target (each attempt's own auth is on the forward stage's `routed` slice).
          context.routing = routed;
          context.auth = firstLeaf(routed.plan);
          await next();
          return;
        }
      }
      // `"model": "<provider>/<model>"` names the provider when neither the key nor a header does.
      const prefixed = resolution.provider === undefined && headers['x-gateway-provider'] === undefined ? providerPrefix(context.request, registry) : undefined;
      if (prefixed !== undefined) context.request = prefixed.request;
      context.auth = await openPlainTarget(context, headers, resolution, prefixed?.provider, targets);
      await next();
    },
  };
}
