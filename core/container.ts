import { pino, type DestinationStream, type Logger } from 'pino';
import { type DependencyContainer, type InjectionToken, instanceCachingFactory } from 'tsyringe';
import type { ResolvedConfig } from '../config/index.js';
import type { LogSink } from './logs/entry.js';
import { type HeldLines, loggerWithHeldLines } from './logs/pino-sink.js';
import type { RoutingStateStore } from './routing/state.js';
import type { RouteSource, TargetCredentials } from './routing/sources.js';
import type { Clock } from './spec/manifest.js';
import type { QuotaClock } from './quota/scheduler.js';
import type { ClaimsMapper } from './identity/jwt.js';
import type { SignInHandler } from './identity/oidc.js';

/**
 * How a gateway's parts are built: each subsystem registers its parts in the gateway's own tsyringe
 * child container (one per gateway instance), under the part's class, with `provide`. A part's
 * factory resolves the parts it depends on, so that factory is the one place that says them; it
 * runs on first resolution and its instance is kept. No decorators: the classes themselves know
 * nothing of the container.
 */
export type Container = DependencyContainer;

/** Registers how the one instance of `part` in this container is built. */
export function provide<T>(container: Container, part: abstract new (...args: never[]) => T, build: (container: Container) => T): void {
  container.register(part as InjectionToken<T>, { useFactory: instanceCachingFactory(build) });
}

/** Options for building a gateway beyond its configuration (used by tests, the bench and main). */
export interface GatewayOptions {
  /** Where pino writes (default: stdout, asynchronously). */
  logDestination?: DestinationStream;
  /** Environment to resolve the configuration against (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
  /** Extra log sinks. */
  sinks?: LogSink[];
  /** The clock the gateway and its plugins read (default: the system's). */
  clock?: Clock;
  /** Routing: where stored routes and the targets' credentials come from, and (tests) the randomness, waits and state. */
  routing?: RoutingOptions;
  /** Who a single sign-on or a JWT is on this gateway (docs/sso.md); absent: both are refused. */
  identity?: IdentityOptions;
  /**
   * For tests only: the providers' quotas' clock (a simulated one drives a minute of traffic in no
   * time), window (default 60 000 ms) and idle time (default 5000 ms). Not a configuration setting.
   */
  quota?: { readonly clock?: QuotaClock; readonly windowMs?: number; readonly idleMs?: number };
}

/** What the user directory hands the identity providers: the decisions, never the verification. */
export interface IdentityOptions {
  /** Decides who a verified OpenID Connect identity is (default: nobody; "no access"). */
  readonly signIn?: SignInHandler;
  /** Maps a verified JWT's claims to a caller (default: none; 401 `jwt_not_mapped`). */
  readonly mapClaims?: ClaimsMapper;
}

/** What the route executor and the auth stage's route lookup are given besides the configuration. */
export interface RoutingOptions {
  /** Stored routes and admin aliases; absent: only the config's `routes` and `models`. */
  readonly source?: RouteSource;
  /** Opens stored credentials and virtual keys that targets name; absent: such targets are refused (400). */
  readonly targetCredentials?: TargetCredentials;
  /** Breakers and balancer statistics (default: in memory, per instance, on the gateway's clock). */
  readonly state?: RoutingStateStore;
  /** Numbers in [0, 1) for weighted picks and jitter (default `Math.random`). */
  readonly random?: () => number;
  /** Waits between attempts (default a timer cancelled when the client leaves). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** The real clock. */
const systemClock: Clock = { now: () => Date.now() };

/**
 * What every part of a gateway may read: its resolved configuration, its options, its clock and its
 * pino logger (with the lines it holds back until the request's log entry is written).
 */
export class GatewaySettings {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly lines: HeldLines;
  constructor(
    readonly config: ResolvedConfig,
    readonly options: GatewayOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    ({ logger: this.logger, lines: this.lines } = loggerWithHeldLines(
      // No pino `redact`: log entries are built without headers, bodies or credentials (and error
      // messages are scrubbed in buildLogEntry); wildcard redaction measured 30-80 µs per line.
      { level: config.logLevel, base: undefined },
      options.logDestination ?? pino.destination({ dest: 1, sync: false }),
    ));
  }
}
