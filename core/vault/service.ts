import type { Principals } from './applicable-levels.js';
import { BootError } from '../errors.js';
import { type AlertLogger, type AlertWebhook, BudgetAlerts } from './alerts.js';
import { BudgetRefusals } from './budget-refusals.js';
import type { RouteSource, TargetCredentials } from '../routing/sources.js';
import { RouteStore } from '../routing/store.js';
import type { ControlPlaneHttp } from '../spec/manifest.js';
import { openSharedState } from '../cluster/shared-state.js';
import type { SharedState } from '../store/state.js';
import { Credentials } from './credentials.js';
import type { SealedSecret } from './crypto.js';
import { type LimitHooks, limitHooks } from './limits.js';
import { PriceTable, type PricingOptions } from './pricing.js';
import type { TeamLookup } from './team-access.js';
import { targetCredentials, type VirtualKeyResolver, virtualKeyResolver } from './resolver.js';
import { Vault } from './vault.js';
import { routeWithKeyIds, VirtualKeys } from './virtual-keys.js';

export interface VaultServiceOptions {
  readonly dataDir: string;
  /** A team key's team (its allowed models and providers, its default policy); absent: teams restrict nothing at request time. */
  readonly teams?: TeamLookup;
  /** The users, service accounts and organization whose limits apply besides keys' (core/org). */
  readonly principals?: Principals;
  /** Shared Redis (`REDIS_URL`); the embedded SQLite file when absent. */
  readonly redisUrl?: string;
  /** Prefix of every Redis key and channel (default `gateway`). */
  readonly redisPrefix: string;
  /** Where `GATEWAY_MASTER_KEY` is read from; it is deleted from it once the worker holds it. */
  readonly environment: NodeJS.ProcessEnv;
  /** How long a decrypted credential stays cached in the request thread (default 60 000 ms). */
  readonly credentialCacheMs: number;
  readonly pricing?: PricingOptions;
  /** Output tokens reserved when a request gives no `max_tokens`. */
  readonly outputTokenEstimate: number;
  /** How long a request's budget reservation counts if nothing settles it (`vault.reservationLeaseMs`; default the state's). */
  readonly reservationLeaseMs?: number;
  /** Budget alerts: the webhook they are posted to (none: shown by the dashboard only), with the control-plane HTTP client. */
  readonly alerts?: { readonly webhook?: AlertWebhook; readonly http?: ControlPlaneHttp; readonly logger?: AlertLogger; readonly retryDelaysMs?: readonly number[] };
}

/** What the vault opens on start. */
export interface VaultParts {
  readonly state: SharedState;
  readonly vault: Vault;
  readonly credentials: Credentials;
  readonly keys: VirtualKeys;
  /** Stored routes and model aliases (`/admin/routes`, `/admin/models`). */
  readonly routes: RouteStore;
}

const CANARY = 'vault:canary';
/** `{ kid }`: the master key every instance seals under, set by a rotation. */
const CURRENT_MASTER_KEY = 'vault:master-key';

/**
 * Everything virtual keys need, started once: the shared state, the vault worker, credentials,
 * keys, the auth resolver and the limit hooks. Hooks and resolver exist from construction (the
 * pipeline is built synchronously); the state behind them opens in {@link start}.
 */
export class VaultService {
  readonly prices: PriceTable;
  readonly resolver: VirtualKeyResolver;
  readonly hooks: LimitHooks;
  /** Stored routes and model aliases (by id or name), for the auth stage; usable once started. */
  readonly routes: RouteSource;
  /** Stored credentials and virtual keys a route's targets name, for the route executor. */
  readonly targets: TargetCredentials;
  /** Keys' spend reaching 80 % and 100 % of their budgets (`GET /admin/alerts`, the optional webhook). */
  readonly alerts: BudgetAlerts;
  /** The smallest request estimate refused for each key's budget in its period (the usage API's `budget_exhausted`). */
  readonly refusals: BudgetRefusals;
  private started?: VaultParts;
  private starting?: Promise<void>;

  constructor(private readonly options: VaultServiceOptions) {
    this.prices = new PriceTable(options.pricing);
    this.resolver = virtualKeyResolver({ keys: () => this.parts.keys, credentials: () => this.parts.credentials, ...(options.teams ? { teams: options.teams } : {}) });
    this.routes = {
      route: (idOrName) => this.parts.routes.route(idOrName),
      alias: (model) => this.parts.routes.alias(model),
      cachedAlias: (model) => this.parts.routes.cachedAlias(model),
    };
    this.targets = targetCredentials(this.resolver, { keys: () => this.parts.keys, credentials: () => this.parts.credentials });
    this.alerts = new BudgetAlerts({
      state: () => this.parts.state,
      ...(options.alerts?.webhook && options.alerts.http ? { webhook: options.alerts.webhook, http: options.alerts.http } : {}),
      logger: options.alerts?.logger ?? { warn: () => {} },
      ...(options.alerts?.retryDelaysMs ? { retryDelaysMs: options.alerts.retryDelaysMs } : {}),
    });
    this.refusals = new BudgetRefusals(() => this.parts.state);
    this.hooks = limitHooks({
      onCharged: (budget, spentNanos) => this.alerts.charged(budget, spentNanos),
      onBudgetRefused: (refusal) => this.refusals.refused(refusal),
      state: () => this.parts.state,
      prices: this.prices,
      record: async (id) => this.parts.keys.cached(id) ?? this.parts.keys.get(id),
      outputTokenEstimate: options.outputTokenEstimate,
      ...(options.reservationLeaseMs !== undefined ? { reservationLeaseMs: options.reservationLeaseMs } : {}),
      ...(options.teams ? { teams: options.teams } : {}),
      ...(options.principals ? { principals: options.principals } : {}),
    });
  }

  get parts(): VaultParts {
    if (!this.started) throw new Error('the vault is not started');
    return this.started;
  }

  /** True once {@link start} has finished. */
  get isStarted(): boolean {
    return this.started !== undefined;
  }

  get keys(): VirtualKeys {
    return this.parts.keys;
  }

  get credentials(): Credentials {
    return this.parts.credentials;
  }

  /**
   * Seals a secret that is not a credential (a conversation's masking map) under the current master
   * key, bound to `recordId` (opening it under another id fails).
   */
  async sealText(recordId: string, plaintext: string): Promise<SealedSecret> {
    const { vault, state } = this.parts;
    return vault.seal(recordId, plaintext, await currentMasterKeyId(state));
  }

  /** Opens what {@link sealText} sealed for `recordId`; rejects when it was altered or its master key is gone. */
  openText(recordId: string, sealed: SealedSecret): Promise<string> {
    return this.parts.vault.unseal(recordId, sealed);
  }

  /** Opens the store, starts the worker and proves the master key opens what is stored. */
  start(): Promise<void> {
    this.starting ??= this.open();
    return this.starting;
  }

  private async open(): Promise<void> {
    // The worker thread is created first (synchronously, before any await) so that its boot runs
    // in parallel with the store's opening and with whatever the caller does next.
    const vaultStarting = Vault.start({ dataDir: this.options.dataDir, environment: this.options.environment }).then(
      (vault) => ({ vault }),
      (error: unknown) => ({ error }),
    );
    let state: SharedState;
    try {
      state = await openSharedState({ dataDir: this.options.dataDir, redisUrl: this.options.redisUrl, redisPrefix: this.options.redisPrefix });
    } catch (error) {
      const started = await vaultStarting;
      if ('vault' in started) await started.vault.close();
      throw error;
    }
    const started = await vaultStarting;
    if ('error' in started) {
      await state.close();
      throw new BootError('INVALID_CONFIG', `vault: ${(started.error as Error).message}`);
    }
    const vault = started.vault;
    try {
      await checkCanary(state, vault);
    } catch (error) {
      await Promise.allSettled([vault.close(), state.close()]);
      throw error;
    }
    const credentials = new Credentials(state, vault, this.options.credentialCacheMs, () => currentMasterKeyId(state));
    // A key changed or deleted also drops its decrypted credential from this thread at once.
    const keys = new VirtualKeys(state, (record) => {
      if (record.credential_id !== undefined) credentials.forget(record.credential_id);
    });
    // Routes stored before keys were named by id hold a key's value: rewritten to the id as they are read.
    this.started = { state, vault, credentials, keys, routes: new RouteStore(state, { migrate: (route) => routeWithKeyIds(route, keys) }) };
  }

  /**
   * Re-wraps every data key (and the start-up canary) under the master key `kid` (else the worker's
   * active one), record by record: each record stays readable throughout, so instances keep
   * serving. Returns the count.
   */
  async rewrapAll(kid?: string): Promise<number> {
    const { state, vault, credentials } = this.parts;
    const changed = await credentials.rewrapAll(kid);
    const canary = await state.records.get<SealedSecret>(CANARY);
    if (canary) await state.records.set(CANARY, await vault.rewrap(CANARY, canary, kid));
    return changed;
  }

  /** Ids of the master keys that stored records (credentials and the canary) are wrapped under. */
  private async keyIdsInUse(): Promise<Set<string>> {
    const { state, credentials } = this.parts;
    const kids = await credentials.keyIdsInUse();
    const canary = await state.records.get<SealedSecret>(CANARY);
    if (canary) kids.add(canary.kid);
    return kids;
  }

  /**
   * Rotates the master key without downtime, with instances running. Key file: a new key is added
   * (the old ones stay). GATEWAY_MASTER_KEY: the operator has put the new key first (`new,old`).
   * The new key is made current in the shared state, which every instance reads before it seals
   * (and after, see Credentials), so none seals under an old key from then on; every record is
   * re-wrapped; then the key file keeps only the current key and any key a record still uses.
   */
  async rotateMasterKey(): Promise<{ mode: 'env' | 'file'; activeKeyId: string; rewrapped: number; retained: string[] }> {
    const { vault, state } = this.parts;
    const kid = vault.source === 'file' ? await vault.addKey() : vault.activeKeyId;
    await state.records.set(CURRENT_MASTER_KEY, { kid });
    let rewrapped = 0;
    let retained: string[] = [];
    for (let pass = 0; pass < 3; pass++) {
      rewrapped += await this.rewrapAll(kid);
      retained = [...(await this.keyIdsInUse())].filter((used) => used !== kid);
      if (retained.length === 0) break;
    }
    if (vault.source === 'file') await vault.retireKeys(retained);
    return { mode: vault.source, activeKeyId: kid, rewrapped, retained };
  }

  async close(): Promise<void> {
    await this.starting?.catch(() => {});
    // Budget checks still running need the state; webhook sends and their retries are abandoned.
    await this.alerts.close();
    if (!this.started) return;
    await Promise.allSettled([this.started.vault.close(), this.started.state.close()]);
  }
}

/** A known value sealed on first start: a different master key cannot open it, and start-up says so. */
async function checkCanary(state: SharedState, vault: Vault): Promise<void> {
  const stored = await state.records.get<SealedSecret>(CANARY);
  if (!stored) {
    await state.records.set(CANARY, await vault.seal(CANARY, 'gateway-vault', await currentMasterKeyId(state)));
    return;
  }
  try {
    if ((await vault.unseal(CANARY, stored)) === 'gateway-vault') return;
  } catch {
    // fall through to the message below
  }
  throw new BootError(
    'INVALID_CONFIG',
    `the master key (id ${vault.activeKeyId}) cannot open this gateway's vault, sealed under master key id ${stored.kid}. ` +
      'Start with the GATEWAY_MASTER_KEY (or data-dir master.key) that sealed it; to change keys, rotate with the CLI instead.',
  );
}

/** The master key id a rotation made current (undefined before the first rotation). */
async function currentMasterKeyId(state: SharedState): Promise<string | undefined> {
  return (await state.records.get<{ kid: string }>(CURRENT_MASTER_KEY))?.kid;
}
