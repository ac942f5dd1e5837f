import { type Container, GatewaySettings, provide } from './container.js';
import { PolicyRegistry } from './guardrails/registry.js';
import { ControlPlane } from './http/assemble.js';
import { PluginRegistry } from './registry.js';
import type { GuardrailRegistration } from './spec/guardrail.js';
import type { PluginDependencies, PluginManifest, StoredCredential } from './spec/manifest.js';
import { VaultService } from './vault/service.js';

/** What a plugin's factory is given: a logger bound to its id, the control-plane client, the clock, the vault's credentials. */
export function pluginDependencies(c: Container): (manifest: Pick<PluginManifest, 'id'>) => PluginDependencies {
  const { logger, clock } = c.resolve(GatewaySettings);
  const { http } = c.resolve(ControlPlane);
  // Resolved on first use: plugins are created before the vault starts, and read credentials per call.
  const credential = async (id: string): Promise<StoredCredential> => {
    const vault = c.resolve(VaultService);
    if (!vault.isStarted) throw new Error('the vault is not started');
    const opened = await vault.credentials.open(id);
    if (!opened) throw new Error(`no stored credential with id "${id}"`);
    return opened;
  };
  return (manifest) => ({
    logger: logger.child({ plugin: manifest.id }),
    get http() {
      return http();
    },
    clock,
    credential,
  });
}

/** Registers the plugins: the guardrail policies, and the registry of providers and guardrails (both validated at boot). */
export function registerPlugins(container: Container): void {
  provide(container, PolicyRegistry, (c) => new PolicyRegistry(c.resolve(GatewaySettings).config.policies, pluginDependencies(c)));
  provide(container, PluginRegistry, (c) => {
    const { config } = c.resolve(GatewaySettings);
    // Guardrails the policies use are listed too, once per plugin id.
    const configured = config.guardrails.filter((entry): entry is GuardrailRegistration => typeof entry !== 'function');
    const listed = new Set(configured.map((registration) => registration.manifest?.id));
    const used = c
      .resolve(PolicyRegistry)
      .registrations()
      .filter((registration) => !listed.has(registration.manifest.id) && listed.add(registration.manifest.id));
    return new PluginRegistry(config.providers, [...configured, ...used], pluginDependencies(c));
  });
}
