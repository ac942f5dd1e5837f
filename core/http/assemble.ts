import { type Container, GatewaySettings, provide } from '../container.js';
import type { ControlPlaneHttp } from '../spec/manifest.js';
import { lazyControlPlaneHttp } from './control-plane.js';
import { CustomHostGuard } from './custom-host.js';
import { MemoryBudget } from './memory-budget.js';
import { UpstreamClient } from './upstream.js';

/** The HTTP client for control-plane calls only (webhook guardrails, alerts), built on first use. */
export class ControlPlane {
  readonly http: () => ControlPlaneHttp = lazyControlPlaneHttp();
}

/** Registers the transport: the upstream client (undici) behind the custom-host guard, the memory budget, the control-plane client. */
export function registerHttp(container: Container): void {
  // Control-plane calls only (webhook guardrails); model calls go through the undici UpstreamClient.
  container.register(ControlPlane, { useValue: new ControlPlane() });
  provide(container, MemoryBudget, (c) => new MemoryBudget(c.resolve(GatewaySettings).config.memoryBudgetBytes));
  provide(container, CustomHostGuard, (c) => new CustomHostGuard(c.resolve(GatewaySettings).config.customHosts));
  provide(container, UpstreamClient, (c) => new UpstreamClient({ ...c.resolve(GatewaySettings).config.upstream, guardedLookup: c.resolve(CustomHostGuard).lookup }));
}
