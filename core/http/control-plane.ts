import type { AxiosStatic } from 'axios';
import { requireDependency } from '../require.js';
import type { ControlPlaneHttp } from '../spec/manifest.js';

/**
 * The control-plane HTTP client (axios), created on first use. Importing axios took 40–75 ms of a
 * start-up of ~430 ms on the 2-core bench machine, and only webhook guardrails and budget-alert
 * webhooks use it: a gateway that makes no control-plane call never loads it. `require` keeps the
 * first use synchronous, so `PluginDependencies.http` stays a plain axios instance.
 */
export function lazyControlPlaneHttp(): () => ControlPlaneHttp {
  let instance: ControlPlaneHttp | undefined;
  return () => (instance ??= (requireDependency('axios') as AxiosStatic).create());
}
