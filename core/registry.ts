import { assertParams } from './params-schema.js';
import { BootError } from './errors.js';
import type { GuardrailPlugin, GuardrailRegistration } from './spec/guardrail.js';
import type { PluginDependencies, PluginManifest, PluginRegistration } from './spec/manifest.js';
import { type ProviderPlugin, type ProviderRegistration, SPECIFICATION_VERSION } from './spec/provider.js';

const ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const VERSION_PATTERN = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

/** A registered plugin as listed by `GET /admin/plugins`. */
export interface PluginListing extends PluginManifest {
  /** Provider operations, e.g. `["chat"]`. */
  readonly operations?: string[];
}

/**
 * A provider written against a contract version this gateway does not implement would fail on its
 * first request, or worse, half work: it is refused at boot instead.
 */
function checkSpecificationVersion(manifest: ProviderRegistration['manifest'], label: string): void {
  const version: unknown = manifest.specificationVersion;
  if (version !== SPECIFICATION_VERSION) {
    throw new BootError(
      'INVALID_MANIFEST',
      `${label}: specificationVersion ${JSON.stringify(version)} is not supported; this gateway implements the provider contract "${SPECIFICATION_VERSION}"`,
    );
  }
}

/**
 * Validates every plugin a configuration registers (manifest, params, duplicate ids) before any is
 * created, then creates them with their dependencies. Start-up fails with a {@link BootError} that
 * names the plugin and the problem.
 */
export class PluginRegistry {
  private readonly providers = new Map<string, { plugin: ProviderPlugin; manifest: PluginManifest }>();
  private readonly guardrails = new Map<string, { plugin: GuardrailPlugin; manifest: PluginManifest }>();

  constructor(
    providers: readonly ProviderRegistration[],
    guardrails: readonly GuardrailRegistration[],
    dependencies: (manifest: PluginManifest) => PluginDependencies,
  ) {
    const check = (registration: PluginRegistration<PluginManifest['kind'], unknown>, kind: PluginManifest['kind'], seen: Set<string>) => {
      const manifest = registration?.manifest;
      const label = `${kind} plugin "${manifest?.id ?? '(no id)'}"`;
      if (typeof manifest !== 'object' || manifest === null) {
        throw new BootError('INVALID_MANIFEST', `a ${kind} plugin has no manifest (did you pass the factory instead of calling it?)`);
      }
      if (typeof manifest.id !== 'string' || !ID_PATTERN.test(manifest.id)) {
        throw new BootError('INVALID_MANIFEST', `${label}: id must match ${ID_PATTERN}`);
      }
      if (manifest.kind !== kind) {
        throw new BootError('INVALID_MANIFEST', `${label}: kind is "${manifest.kind}" but it was registered as a ${kind}`);
      }
      if (typeof manifest.version !== 'string' || !VERSION_PATTERN.test(manifest.version)) {
        throw new BootError('INVALID_MANIFEST', `${label}: version must be semantic (1.2.3), got ${JSON.stringify(manifest.version)}`);
      }
      if (typeof manifest.description !== 'string' || manifest.description.trim() === '') {
        throw new BootError('INVALID_MANIFEST', `${label}: description is required`);
      }
      if (kind === 'provider') checkSpecificationVersion(manifest as ProviderRegistration['manifest'], label);
      if (typeof registration.create !== 'function') {
        throw new BootError('INVALID_MANIFEST', `${label}: create must be a function`);
      }
      if (seen.has(manifest.id)) throw new BootError('DUPLICATE_PLUGIN', `${label} is registered twice`);
      seen.add(manifest.id);
      if (manifest.params !== undefined) assertParams(manifest.params, registration.params ?? {}, label, '(params)');
    };
    const seenProviders = new Set<string>();
    for (const registration of providers) check(registration, 'provider', seenProviders);
    const seenGuardrails = new Set<string>();
    for (const registration of guardrails) check(registration, 'guardrail', seenGuardrails);

    for (const registration of providers) {
      const plugin = registration.create(dependencies(registration.manifest));
      if (plugin.id !== registration.manifest.id) {
        throw new BootError('INVALID_MANIFEST', `provider plugin "${registration.manifest.id}" created an instance with id "${plugin.id}"`);
      }
      if (!Array.isArray(plugin.authHeaders) || !plugin.authHeaders.every((name) => typeof name === 'string' && name === name.toLowerCase() && name.length > 0)) {
        throw new BootError('INVALID_MANIFEST', `provider plugin "${plugin.id}" must declare authHeaders: the lower-case names of the request headers that carry its credentials`);
      }
      this.providers.set(plugin.id, { plugin, manifest: registration.manifest });
    }
    for (const registration of guardrails) {
      this.guardrails.set(registration.manifest.id, {
        plugin: registration.create(dependencies(registration.manifest)),
        manifest: registration.manifest,
      });
    }
  }

  provider(id: string): ProviderPlugin | undefined {
    return this.providers.get(id)?.plugin;
  }

  guardrail(id: string): GuardrailPlugin | undefined {
    return this.guardrails.get(id)?.plugin;
  }

  providerIds(): string[] {
    return [...this.providers.keys()];
  }

  list(): { providers: PluginListing[]; guardrails: PluginListing[] } {
    return {
      providers: [...this.providers.values()].map(({ plugin, manifest }) => ({
        ...manifest,
        name: plugin.name,
        operations: Object.keys(plugin.operations).filter((name) => plugin.operations[name as keyof typeof plugin.operations]),
      })),
      guardrails: [...this.guardrails.values()].map(({ manifest }) => ({ ...manifest })),
    };
  }
}

/** The start-up banner's provider lines: one per provider with the operations it supports. */
export function providerBanner(providers: readonly PluginListing[]): string {
  const width = Math.max(0, ...providers.map((provider) => provider.id.length));
  const lines = providers.map((provider) => `  ${provider.id.padEnd(width)}  ${provider.operations?.length ? provider.operations.join(', ') : '(pass-through only)'}`);
  return `providers: ${providers.length}\n${lines.join('\n')}\n`;
}
