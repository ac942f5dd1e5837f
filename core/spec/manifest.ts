import type { AxiosInstance } from 'axios';

/**
 * What every plugin says about itself. The registry validates it at boot (so a misconfigured plugin
 * fails on start, not on its thousandth request) and lists it at `GET /admin/plugins`.
 */
export interface PluginManifest {
  /** Lower-case, `[a-z0-9-]`, unique among plugins of its kind. For providers: the `x-gateway-provider` slug. */
  readonly id: string;
  readonly kind: 'provider' | 'guardrail';
  /** Semantic version of the plugin itself (`1.2.3`). */
  readonly version: string;
  /** One sentence a person reads in the admin listing. */
  readonly description: string;
  /**
   * JSON Schema (draft 2020-12 subset understood by ajv) of the params the plugin's factory takes.
   * The registry validates the params a configuration passed against it at boot.
   */
  readonly params?: Record<string, unknown>;
}

/**
 * What a plugin factory returns: the manifest, the params it was called with, and a `create`
 * that receives the plugin's dependencies. Keeping creation separate lets the registry validate
 * every plugin before any of them builds state.
 */
export interface PluginRegistration<Kind extends PluginManifest['kind'], Instance> {
  readonly manifest: PluginManifest & { readonly kind: Kind };
  readonly params: unknown;
  create(dependencies: PluginDependencies): Instance;
}

/**
 * Dependencies handed to a plugin when it is created, from the composition root's container.
 * Plugins never reach into the composition root; what they need is passed here, so a test can
 * hand a plugin its own clock or HTTP client.
 */
export interface PluginDependencies {
  /** A child logger bound to the plugin id; never log secrets through it. */
  readonly logger: PluginLogger;
  /**
   * The gateway's HTTP client for control-plane calls (webhooks, policy services): one axios
   * instance shared by every plugin. Each call sets its own timeout. Model calls never go through
   * it: they are the forward stage's (undici), so a provider plugin does not use it.
   */
  readonly http: ControlPlaneHttp;
  /** The gateway's clock: use it instead of `Date.now()`, so time can be fixed in tests. */
  readonly clock: Clock;
  /**
   * Opens a credential stored in the vault (`POST /admin/credentials`) by its id: its secret,
   * decrypted (cached briefly, and dropped at once when the credential is rotated or deleted).
   * Rejects when no credential has that id or the vault is not started. Call it when the secret is
   * needed (per check), never at creation, so a rotation applies from the next call; never log what
   * it returns.
   */
  readonly credential: (id: string) => Promise<StoredCredential>;
}

/** A stored credential's secret: an API key and/or named fields (e.g. `secretAccessKey`, `region`). */
export interface StoredCredential {
  readonly apiKey?: string;
  readonly fields?: Readonly<Record<string, string>>;
}

/** The control-plane HTTP client plugins are given (an axios instance). */
export type ControlPlaneHttp = AxiosInstance;

/** A source of the current time. */
export interface Clock {
  /** Milliseconds since the Unix epoch, as `Date.now()`. */
  now(): number;
}

/** The logger surface plugins may use (a subset of pino's). */
export interface PluginLogger {
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
  debug(object: object, message?: string): void;
}
